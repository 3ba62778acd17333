import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  HttpVersion,
  OriginRequestPolicy,
  SecurityPolicyProtocol,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { FunctionUrlOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { AaaaRecord, ARecord, HostedZone, RecordTarget } from 'aws-cdk-lib/aws-route53';
import { CloudFrontTarget } from 'aws-cdk-lib/aws-route53-targets';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { CustomDomainConfig } from '../config.ts';
import type { GatewayFunction } from './gateway-function.ts';

/** The header lambda/middleware/request-context.ts compares with GATEWAY_ORIGIN_SECRET. */
export const ORIGIN_VERIFY_HEADER = 'x-origin-verify';

/** The domain settings, and the gateway CloudFront fronts. */
export interface CustomDomainProps {
  config: CustomDomainConfig;
  gateway: GatewayFunction;
}

/**
 * The gateway on the team's own domain: CloudFront in front of the Function URL, with an ACM
 * certificate and a Route 53 alias. The zone is given by id and name (no lookup), so synth
 * stays offline and the stack environment-agnostic.
 *
 * CloudFront is configured as a pass-through so streams still stream: no caching, every
 * method, every viewer header but Host (a Function URL routes on its own Host, and the
 * `authorization`/`x-api-key` headers must reach the function), no compression (which would
 * buffer server-sent events), and a long origin read timeout for silent stretches.
 *
 * Origin access control cannot protect the Function URL here: it needs AWS_IAM auth, and then
 * every POST must carry a SHA-256 of its body, which no agent client sends. Instead, when
 * `refuseDirectRequests` is on, CloudFront adds a generated value as `x-origin-verify` and the
 * function refuses requests without it. The value is generated into Secrets Manager and
 * reaches CloudFront and the function by dynamic reference at deploy time, so it is never in
 * cdk.json, the template or git; it is readable in the function's and the distribution's
 * configuration by whoever may read those.
 */
export class CustomDomain extends Construct {
  readonly distribution: Distribution;
  /** `https://<domain>/`, shaped like a Function URL so base addresses are built the same way. */
  readonly url: string;

  constructor(scope: Construct, id: string, props: CustomDomainProps) {
    super(scope, id);
    const { config, gateway } = props;
    // lib/config.ts refuses customDomain with privateApi.functionUrl false.
    if (gateway.url === undefined) throw new Error('customDomain needs the Function URL, and privateApi.functionUrl is false');
    this.distribution = new Distribution(this, 'Distribution', {
      comment: `Agent gateway ${config.domainName}`,
      domainNames: [config.domainName],
      certificate: Certificate.fromCertificateArn(this, 'Certificate', config.certificateArn),
      minimumProtocolVersion: SecurityPolicyProtocol.TLS_V1_2_2021,
      httpVersion: HttpVersion.HTTP2_AND_3,
      defaultBehavior: {
        origin: new FunctionUrlOrigin(gateway.url, {
          readTimeout: Duration.seconds(config.originReadTimeoutSeconds),
          customHeaders: config.refuseDirectRequests ? { [ORIGIN_VERIFY_HEADER]: this.#originSecret(gateway) } : undefined,
        }),
        allowedMethods: AllowedMethods.ALLOW_ALL,
        cachePolicy: CachePolicy.CACHING_DISABLED,
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        // A redirect would turn an agent's POST into a body-less GET; refuse plain HTTP instead.
        viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
        compress: false,
      },
    });
    this.url = `https://${config.domainName}/`;
    Validations.of(this.distribution).acknowledge(
      {
        id: 'AwsSolutions-CFR1',
        reason: "Coding agents call from wherever the team works; which countries to refuse is the operator's policy, not a default of the gateway.",
      },
      {
        id: 'AwsSolutions-CFR2',
        reason: 'Every request is authenticated in the function with a gateway-issued key and rate-limited per key; a web ACL (billed per request, us-east-1 only) can be attached by the operator where policy requires one.',
      },
      {
        id: 'AwsSolutions-CFR3',
        reason: 'The function logs each request that reaches it (one JSON line: key id, route, model, status, latency). CloudFront access logs would add viewer IPs and edge timings for the price of a log destination; an operator who needs them can enable them on the distribution without any change to the gateway.',
      },
    );

    const zone = HostedZone.fromHostedZoneAttributes(this, 'Zone', { hostedZoneId: config.hostedZoneId, zoneName: config.zoneName });
    const target = RecordTarget.fromAlias(new CloudFrontTarget(this.distribution));
    new ARecord(this, 'AliasIpv4', { zone, recordName: config.domainName, target });
    new AaaaRecord(this, 'AliasIpv6', { zone, recordName: config.domainName, target });
  }

  /** A generated shared secret, handed to the function, returned for CloudFront's header. */
  #originSecret(gateway: GatewayFunction): string {
    const secret = new Secret(this, 'OriginVerifySecret', {
      description: `Agent gateway: value CloudFront sends as ${ORIGIN_VERIFY_HEADER} so the function can refuse requests that bypass it.`,
      // Letters and digits only: the value travels as an HTTP header.
      generateSecretString: { passwordLength: 48, excludePunctuation: true, includeSpace: false },
      removalPolicy: RemovalPolicy.DESTROY,
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason: 'CloudFront and the function receive this value when CloudFormation resolves the reference at deploy time; a scheduled rotation would change it under both, and the function would refuse every request until a deploy updated them.',
    });
    // A `{{resolve:secretsmanager:...}}` reference, resolved by CloudFormation at deploy time.
    const value = secret.secretValue.unsafeUnwrap();
    gateway.requireOriginHeader(value);
    return value;
  }
}
