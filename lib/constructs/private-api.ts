import { Aws, Duration, Fn, Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  CfnBasePathMappingV2,
  CfnDomainNameAccessAssociation,
  CfnDomainNameV2,
  EndpointType,
  IpAddressType,
  LambdaRestApi,
  LogGroupLogDestination,
  ResponseTransferMode,
} from 'aws-cdk-lib/aws-apigateway';
import { CfnSecurityGroup, CfnVPCEndpoint, InterfaceVpcEndpoint } from 'aws-cdk-lib/aws-ec2';
import { AnyPrincipal, Effect, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnRecordSet } from 'aws-cdk-lib/aws-route53';
import { Construct } from 'constructs';
import type { PrivateApiConfig } from '../config.ts';

/** The stage the domain maps to; clients never see its name (the mapping has no base path). */
export const PRIVATE_API_STAGE = 'live';

export interface PrivateApiProps {
  config: PrivateApiConfig;
  /** The gateway function (lambda/handler.ts turns the REST events into the ones it reads). */
  function: IFunction;
  /** The integration timeout when the config sets none: a stream may last as long as the function allows. */
  functionTimeout: Duration;
  logRetention: RetentionDays;
  /** X-Ray on the stage, with the function's. */
  tracing: boolean;
}

/**
 * The gateway on a private network, for Claude Code's `/login`: it accepts only https hosts that
 * resolve to private addresses and pins their leaf certificate, which a public Function URL can
 * never be. A PRIVATE REST API (API Gateway) streams to the same function (`STREAM` response
 * transfer mode: the function's response stream is relayed as it is written), on a private custom
 * domain with the team's ACM certificate, reached only through an execute-api interface VPC
 * endpoint: both the API's and the domain's resource policies deny every other source
 * (`aws:SourceVpce`). The domain is mapped with no base path, so paths are the gateway's own.
 *
 * Every request body reaches the function base64-encoded (binary media type `*\/*`), byte for
 * byte: a compressed body would otherwise be decoded as UTF-8 text on the way.
 */
export class PrivateApi extends Construct {
  readonly api: LambdaRestApi;
  readonly domain: CfnDomainNameV2;
  /** `https://<domain>/`, shaped like a Function URL so base addresses are built the same way. */
  readonly url: string;
  readonly vpcEndpointId: string;
  /** The created endpoint's regional DNS name (what the domain must resolve to); undefined for an existing endpoint. */
  readonly vpcEndpointDnsName: string | undefined;

  constructor(scope: Construct, id: string, props: PrivateApiProps) {
    super(scope, id);
    const { config } = props;
    const created = config.vpcId === undefined ? undefined : this.#createEndpoint(config);
    this.vpcEndpointId = created?.ref ?? (config.vpcEndpointId as string);
    this.vpcEndpointDnsName = created && Fn.select(1, Fn.split(':', Fn.select(0, created.attrDnsEntries)));
    const endpoint = InterfaceVpcEndpoint.fromInterfaceVpcEndpointAttributes(this, 'EndpointRef', { vpcEndpointId: this.vpcEndpointId, port: 443 });

    const accessLogs = config.accessLogs ? new LogGroup(this, 'AccessLogs', { retention: props.logRetention }) : undefined;
    this.api = new LambdaRestApi(this, 'Api', {
      handler: props.function,
      restApiName: `${Stack.of(this).stackName}-private`,
      description: `Agent gateway, private: ${config.domainName} through ${config.vpcEndpointId ?? 'the endpoint this stack creates'}`,
      integrationOptions: {
        responseTransferMode: ResponseTransferMode.STREAM,
        timeout: Duration.seconds(config.integrationTimeoutSeconds ?? props.functionTimeout.toSeconds()),
        // Only the deployed stage may invoke the function, not the console's test invocations.
        allowTestInvoke: false,
      },
      endpointConfiguration: { types: [EndpointType.PRIVATE], vpcEndpoints: [endpoint], ipAddressType: IpAddressType.DUAL_STACK },
      policy: onlyThrough(this.vpcEndpointId),
      binaryMediaTypes: ['*/*'],
      cloudWatchRole: false,
      deployOptions: {
        stageName: PRIVATE_API_STAGE,
        tracingEnabled: props.tracing,
        ...(accessLogs ? { accessLogDestination: new LogGroupLogDestination(accessLogs), accessLogFormat: AccessLogFormat.jsonWithStandardFields() } : {}),
      },
    });

    this.domain = new CfnDomainNameV2(this, 'Domain', {
      domainName: config.domainName,
      certificateArn: config.certificateArn,
      endpointConfiguration: { types: ['PRIVATE'], ipAddressType: 'dualstack' },
      securityPolicy: 'TLS_1_2',
      policy: onlyThrough(this.vpcEndpointId).toJSON(),
    });
    // No base path: the domain's paths are the gateway's own (`/first/v1/messages`, `/oauth/token`).
    new CfnBasePathMappingV2(this, 'Mapping', { domainNameArn: this.domain.attrDomainNameArn, restApiId: this.api.restApiId, stage: this.api.deploymentStage.stageName });
    new CfnDomainNameAccessAssociation(this, 'Access', { domainNameArn: this.domain.attrDomainNameArn, accessAssociationSource: this.vpcEndpointId, accessAssociationSourceType: 'VPCE' });
    this.url = `https://${config.domainName}/`;

    if (config.hostedZoneId !== undefined) this.#record(config, created);
    this.#acknowledge(accessLogs !== undefined, props.tracing);
  }

  /** An execute-api interface endpoint in the given subnets, open on 443 to the client networks only. */
  #createEndpoint(config: PrivateApiConfig): CfnVPCEndpoint {
    const group = new CfnSecurityGroup(this, 'EndpointSecurityGroup', {
      vpcId: config.vpcId as string,
      groupDescription: `Agent gateway private API endpoint: HTTPS from ${(config.clientCidrs ?? []).join(', ')}`,
      securityGroupIngress: (config.clientCidrs ?? []).map((cidr) => ({
        ipProtocol: 'tcp',
        fromPort: 443,
        toPort: 443,
        ...(cidr.includes(':') ? { cidrIpv6: cidr } : { cidrIp: cidr }),
        description: `HTTPS from ${cidr}`,
      })),
      // An endpoint's interfaces only answer; without a rule CloudFormation would allow all egress.
      securityGroupEgress: [{ ipProtocol: 'icmp', fromPort: 252, toPort: 86, cidrIp: '255.255.255.255/32', description: 'No egress' }],
    });
    return new CfnVPCEndpoint(this, 'Endpoint', {
      vpcId: config.vpcId as string,
      serviceName: `com.amazonaws.${Aws.REGION}.execute-api`,
      vpcEndpointType: 'Interface',
      subnetIds: config.subnetIds as string[],
      securityGroupIds: [group.attrGroupId],
      // Private DNS would send every *.execute-api name in the VPC here, cutting the VPC off from
      // public APIs (API Gateway's private API documentation); clients use the custom domain instead.
      privateDnsEnabled: false,
    });
  }

  /** The domain, in the private hosted zone, pointing at the endpoint: an alias to a created one, a CNAME to an existing one's DNS name. */
  #record(config: PrivateApiConfig, created: CfnVPCEndpoint | undefined): void {
    const common = { hostedZoneId: config.hostedZoneId, name: `${config.domainName}.` };
    if (created !== undefined) {
      // DnsEntries are "<hosted zone id>:<dns name>"; the first one is the endpoint's regional name.
      const regional = Fn.split(':', Fn.select(0, created.attrDnsEntries));
      new CfnRecordSet(this, 'Record', { ...common, type: 'A', aliasTarget: { dnsName: Fn.select(1, regional), hostedZoneId: Fn.select(0, regional), evaluateTargetHealth: false } });
    } else {
      new CfnRecordSet(this, 'Record', { ...common, type: 'CNAME', ttl: '300', resourceRecords: [config.vpcEndpointDnsName as string] });
    }
  }

  /** The cdk-nag findings that do not apply to this API (test/lib/cdk-nag.test.ts runs the packs). */
  #acknowledge(accessLogs: boolean, tracing: boolean): void {
    const inFunction =
      'The function authenticates every request itself (issued keys, sign-in tokens) and some routes are open by design (OAuth metadata, device authorization, the verification page), each bounded per IP; an API Gateway authorizer would only repeat the check or refuse the open routes.';
    const acknowledgements = [
      { id: 'AwsSolutions-APIG2', reason: 'A proxy to the gateway, which validates every body against its wire format and answers in the client\'s own error format; API Gateway validation would answer in its own.' },
      { id: 'AwsSolutions-APIG3', reason: 'The API is reachable only through the VPC endpoint (resource policy on aws:SourceVpce) and every request is authenticated in the function; a web ACL can be attached to the stage by the operator where policy requires one.' },
      { id: 'AwsSolutions-APIG4', reason: inFunction },
      { id: 'AwsSolutions-COG4', reason: inFunction },
      { id: 'AwsSolutions-APIG6', reason: 'Execution logs need the account-wide API Gateway CloudWatch role, which this stack does not change; the function logs one JSON line per request, and access logs are an option (privateApi.accessLogs).' },
      { id: 'Serverless-APIGWDefaultThrottling', reason: 'The function\'s reserved concurrency bounds what a flood can run up, and keys carry their own rate limits; a stage-wide rate would cap every developer together.' },
    ];
    if (!accessLogs) {
      const reason = 'Access logs need the account-wide API Gateway CloudWatch role, which this stack does not change; turn them on with privateApi.accessLogs once the account has it. The function logs one JSON line per request meanwhile.';
      acknowledgements.push({ id: 'AwsSolutions-APIG1', reason }, { id: 'Serverless-APIGWAccessLogging', reason });
    }
    if (!tracing) acknowledgements.push({ id: 'Serverless-APIGWXrayEnabled', reason: 'X-Ray tracing follows gateway.tracing (off by default): every request is already timed in its log line, and traces are billed.' });
    Validations.of(this.api).acknowledge(...acknowledgements);
  }
}

/** execute-api:Invoke for anyone, denied unless the request came through this VPC endpoint. */
function onlyThrough(vpcEndpointId: string): PolicyDocument {
  const resources = ['execute-api:/*'];
  return new PolicyDocument({
    statements: [
      new PolicyStatement({ principals: [new AnyPrincipal()], actions: ['execute-api:Invoke'], resources }),
      new PolicyStatement({ effect: Effect.DENY, principals: [new AnyPrincipal()], actions: ['execute-api:Invoke'], resources, conditions: { StringNotEquals: { 'aws:SourceVpce': vpcEndpointId } } }),
    ],
  });
}
