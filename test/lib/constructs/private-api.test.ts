import type { Template } from 'aws-cdk-lib/assertions';
import { PRIVATE_API_STAGE } from '../../../lib/constructs/private-api.ts';
import { STACK_OUTPUTS } from '../../../lib/output-names.ts';
import { PRIVATE_API, PRIVATE_API_EXISTING_ENDPOINT, onlyResource, synthGateway } from '../synth.ts';

type Resource = { logicalId: string; properties: Record<string, any> };

function resources(template: Template, type: string): Resource[] {
  return Object.entries(template.findResources(type)).map(([logicalId, resource]) => ({ logicalId, properties: (resource as { Properties: Record<string, any> }).Properties }));
}

/** The resource policy both the API and its domain carry: invoke only through this endpoint. */
function onlyThrough(endpoint: unknown): unknown {
  return {
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Principal: { AWS: '*' }, Action: 'execute-api:Invoke', Resource: 'execute-api:/*' },
      { Effect: 'Deny', Principal: { AWS: '*' }, Action: 'execute-api:Invoke', Resource: 'execute-api:/*', Condition: { StringNotEquals: { 'aws:SourceVpce': endpoint } } },
    ],
  };
}

describe('PrivateApi with an endpoint it creates', () => {
  const { template } = synthGateway({ privateApi: PRIVATE_API });
  const api = onlyResource(template, 'AWS::ApiGateway::RestApi');
  const endpoint = onlyResource(template, 'AWS::EC2::VPCEndpoint');
  const fn = onlyResource(template, 'AWS::Lambda::Function', 'Gateway');
  const endpointRef = { Ref: endpoint.logicalId };

  test('is a PRIVATE REST API reached through the endpoint, taking every body as bytes', () => {
    expect(api.properties).toMatchObject({
      EndpointConfiguration: { Types: ['PRIVATE'], VpcEndpointIds: [endpointRef], IpAddressType: 'dualstack' },
      BinaryMediaTypes: ['*/*'],
      Name: 'AgentGateway-private',
    });
    expect(api.properties.Policy).toEqual(onlyThrough(endpointRef));
  });

  test('streams every path and method to the gateway function, with the function timeout as integration timeout', () => {
    const methods = resources(template, 'AWS::ApiGateway::Method');
    // ANY on / and on /{proxy+}.
    expect(methods.map((method) => method.properties.HttpMethod)).toEqual(['ANY', 'ANY']);
    expect(onlyResource(template, 'AWS::ApiGateway::Resource').properties.PathPart).toBe('{proxy+}');
    for (const method of methods) {
      expect(method.properties.AuthorizationType).toBe('NONE');
      expect(method.properties.Integration).toEqual({
        Type: 'AWS_PROXY',
        IntegrationHttpMethod: 'POST',
        ResponseTransferMode: 'STREAM',
        // 900 s, the function's; streaming integrations may run 15 minutes.
        TimeoutInMillis: 900_000,
        Uri: {
          'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':apigateway:', { Ref: 'AWS::Region' }, ':lambda:path/2021-11-15/functions/', { 'Fn::GetAtt': [fn.logicalId, 'Arn'] }, '/response-streaming-invocations']],
        },
      });
    }
    const timeouts = resources(synthGateway({ timeoutSeconds: 300, privateApi: PRIVATE_API }).template, 'AWS::ApiGateway::Method').map((method) => method.properties.Integration.TimeoutInMillis);
    expect(timeouts).toEqual([300_000, 300_000]);
    const set = resources(synthGateway({ privateApi: { ...PRIVATE_API, integrationTimeoutSeconds: 600 } }).template, 'AWS::ApiGateway::Method').map((method) => method.properties.Integration.TimeoutInMillis);
    expect(set).toEqual([600_000, 600_000]);
  });

  test('API Gateway may invoke the function from the deployed stage only, not from console tests', () => {
    const stage = onlyResource(template, 'AWS::ApiGateway::Stage');
    expect(stage.properties.StageName).toBe(PRIVATE_API_STAGE);
    const permissions = resources(template, 'AWS::Lambda::Permission').filter((permission) => permission.properties.Principal === 'apigateway.amazonaws.com');
    expect(permissions).toHaveLength(2);
    for (const permission of permissions) {
      expect(permission.properties.Action).toBe('lambda:InvokeFunction');
      expect(JSON.stringify(permission.properties.SourceArn)).toContain(JSON.stringify({ Ref: stage.logicalId }));
      expect(JSON.stringify(permission.properties.SourceArn)).not.toContain('test-invoke-stage');
    }
  });

  test('serves the private custom domain with the certificate, only through the endpoint, with no base path', () => {
    const domain = onlyResource(template, 'AWS::ApiGateway::DomainNameV2');
    expect(domain.properties).toEqual({
      DomainName: PRIVATE_API.domainName,
      CertificateArn: PRIVATE_API.certificateArn,
      EndpointConfiguration: { Types: ['PRIVATE'], IpAddressType: 'dualstack' },
      SecurityPolicy: 'TLS_1_2',
      Policy: onlyThrough(endpointRef),
    });
    const domainArn = { 'Fn::GetAtt': [domain.logicalId, 'DomainNameArn'] };
    expect(onlyResource(template, 'AWS::ApiGateway::BasePathMappingV2').properties).toEqual({
      DomainNameArn: domainArn,
      RestApiId: { Ref: api.logicalId },
      Stage: { Ref: onlyResource(template, 'AWS::ApiGateway::Stage').logicalId },
    });
    expect(onlyResource(template, 'AWS::ApiGateway::DomainNameAccessAssociation').properties).toEqual({ DomainNameArn: domainArn, AccessAssociationSource: endpointRef, AccessAssociationSourceType: 'VPCE' });
  });

  test('creates the execute-api endpoint in the subnets, open on 443 to the client networks only, without private DNS', () => {
    const group = onlyResource(template, 'AWS::EC2::SecurityGroup');
    expect(endpoint.properties).toEqual({
      VpcId: PRIVATE_API.vpcId,
      ServiceName: { 'Fn::Join': ['', ['com.amazonaws.', { Ref: 'AWS::Region' }, '.execute-api']] },
      VpcEndpointType: 'Interface',
      SubnetIds: PRIVATE_API.subnetIds,
      SecurityGroupIds: [{ 'Fn::GetAtt': [group.logicalId, 'GroupId'] }],
      PrivateDnsEnabled: false,
    });
    expect(group.properties.VpcId).toBe(PRIVATE_API.vpcId);
    expect(group.properties.SecurityGroupIngress).toEqual([
      { IpProtocol: 'tcp', FromPort: 443, ToPort: 443, CidrIp: '10.0.0.0/8', Description: 'HTTPS from 10.0.0.0/8' },
      { IpProtocol: 'tcp', FromPort: 443, ToPort: 443, CidrIpv6: 'fd00::/8', Description: 'HTTPS from fd00::/8' },
    ]);
    expect(group.properties.SecurityGroupEgress).toHaveLength(1);
    expect(group.properties.SecurityGroupEgress[0].CidrIp).toBe('255.255.255.255/32');
  });

  test("aliases the domain to the endpoint's regional DNS name in the private hosted zone", () => {
    const regional = { 'Fn::Split': [':', { 'Fn::Select': [0, { 'Fn::GetAtt': [endpoint.logicalId, 'DnsEntries'] }] }] };
    expect(onlyResource(template, 'AWS::Route53::RecordSet').properties).toEqual({
      HostedZoneId: PRIVATE_API.hostedZoneId,
      Name: `${PRIVATE_API.domainName}.`,
      Type: 'A',
      AliasTarget: { DNSName: { 'Fn::Select': [1, regional] }, HostedZoneId: { 'Fn::Select': [0, regional] }, EvaluateTargetHealth: false },
    });
    expect(resources(synthGateway({ privateApi: { ...PRIVATE_API, hostedZoneId: undefined } }).template, 'AWS::Route53::RecordSet')).toEqual([]);
  });

  test('ends a silent upstream stream itself, with an error event, before API Gateway would cut it at 5 minutes', () => {
    expect(fn.properties.Environment.Variables.GATEWAY_UPSTREAM_IDLE_TIMEOUT_MS).toBe('240000');
    const tuned = onlyResource(synthGateway({ privateApi: PRIVATE_API, tuning: { upstreamIdleTimeoutMs: 120_000 } }).template, 'AWS::Lambda::Function', 'Gateway');
    expect(tuned.properties.Environment.Variables.GATEWAY_UPSTREAM_IDLE_TIMEOUT_MS).toBe('120000');
    expect(onlyResource(synthGateway().template, 'AWS::Lambda::Function', 'Gateway').properties.Environment.Variables.GATEWAY_UPSTREAM_IDLE_TIMEOUT_MS).toBeUndefined();
  });

  test("tells the function the domain, and outputs the addresses /login takes and the endpoint", () => {
    expect(fn.properties.Environment.Variables.GATEWAY_PRIVATE_API_DOMAIN).toBe(PRIVATE_API.domainName);
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown; Description: string }>;
    expect(outputs[STACK_OUTPUTS.privateApiUrl]?.Value).toBe('https://gw.corp.example.com/');
    expect(outputs[STACK_OUTPUTS.privateApiMessagesBaseUrl]).toMatchObject({ Value: 'https://gw.corp.example.com/first', Description: expect.stringContaining('forceLoginGatewayUrl') });
    expect(outputs[STACK_OUTPUTS.privateApiResponsesBaseUrl]?.Value).toBe('https://gw.corp.example.com/second/v1');
    expect(outputs[STACK_OUTPUTS.privateApiVpcEndpointId]?.Value).toEqual(endpointRef);
    expect(outputs[STACK_OUTPUTS.privateApiVpcEndpointDnsName]?.Value).toEqual({ 'Fn::Select': [1, { 'Fn::Split': [':', { 'Fn::Select': [0, { 'Fn::GetAtt': [endpoint.logicalId, 'DnsEntries'] }] }] }] });
    // The Function URL stays for the login helper and the keys.
    expect(outputs[STACK_OUTPUTS.functionUrl]).toBeDefined();
    onlyResource(template, 'AWS::Lambda::Url');
  });
});

describe('PrivateApi through an existing endpoint', () => {
  const { template } = synthGateway({ privateApi: { ...PRIVATE_API_EXISTING_ENDPOINT, functionUrl: false, accessLogs: true }, tracing: true });

  test('uses the endpoint by id in both resource policies and the access association, creating none', () => {
    expect(resources(template, 'AWS::EC2::VPCEndpoint')).toEqual([]);
    expect(resources(template, 'AWS::EC2::SecurityGroup')).toEqual([]);
    const api = onlyResource(template, 'AWS::ApiGateway::RestApi');
    expect(api.properties.EndpointConfiguration.VpcEndpointIds).toEqual([PRIVATE_API_EXISTING_ENDPOINT.vpcEndpointId]);
    expect(api.properties.Policy).toEqual(onlyThrough(PRIVATE_API_EXISTING_ENDPOINT.vpcEndpointId));
    expect(onlyResource(template, 'AWS::ApiGateway::DomainNameV2').properties.Policy).toEqual(onlyThrough(PRIVATE_API_EXISTING_ENDPOINT.vpcEndpointId));
    expect(onlyResource(template, 'AWS::ApiGateway::DomainNameAccessAssociation').properties.AccessAssociationSource).toBe(PRIVATE_API_EXISTING_ENDPOINT.vpcEndpointId);
  });

  test("points the domain at the endpoint's DNS name with a CNAME", () => {
    expect(onlyResource(template, 'AWS::Route53::RecordSet').properties).toEqual({
      HostedZoneId: PRIVATE_API_EXISTING_ENDPOINT.hostedZoneId,
      Name: `${PRIVATE_API_EXISTING_ENDPOINT.domainName}.`,
      Type: 'CNAME',
      TTL: '300',
      ResourceRecords: [PRIVATE_API_EXISTING_ENDPOINT.vpcEndpointDnsName],
    });
  });

  test('without the Function URL, the private API is the only way in', () => {
    expect(resources(template, 'AWS::Lambda::Url')).toEqual([]);
    const outputs = Object.keys(template.toJSON().Outputs);
    for (const name of [STACK_OUTPUTS.functionUrl, STACK_OUTPUTS.messagesBaseUrl, STACK_OUTPUTS.responsesBaseUrl, STACK_OUTPUTS.privateApiVpcEndpointDnsName]) expect(outputs).not.toContain(name);
    expect(outputs).toContain(STACK_OUTPUTS.privateApiMessagesBaseUrl);
    // Who may invoke the gateway function (the usage aggregator has its own schedule's permission).
    const gateway = { 'Fn::GetAtt': [onlyResource(template, 'AWS::Lambda::Function', 'Gateway').logicalId, 'Arn'] };
    const permissions = resources(template, 'AWS::Lambda::Permission').filter((permission) => JSON.stringify(permission.properties.FunctionName) === JSON.stringify(gateway));
    expect(permissions.map((permission) => permission.properties.Principal)).toEqual(['apigateway.amazonaws.com', 'apigateway.amazonaws.com']);
  });

  test('writes JSON access logs to a log group with the stack retention, and traces the stage when tracing is on', () => {
    const stage = onlyResource(template, 'AWS::ApiGateway::Stage');
    expect(stage.properties.TracingEnabled).toBe(true);
    const group = resources(template, 'AWS::Logs::LogGroup').find((logGroup) => logGroup.logicalId.startsWith('PrivateApi'));
    expect(group?.properties.RetentionInDays).toBe(90);
    // The log group's ARN without the trailing :* (aws-apigateway:logGroupDestinationArnWithoutWildcard).
    expect(JSON.stringify(stage.properties.AccessLogSetting.DestinationArn)).toContain(JSON.stringify({ Ref: group?.logicalId }));
    expect(JSON.parse(stage.properties.AccessLogSetting.Format)).toMatchObject({ requestId: '$context.requestId', status: '$context.status' });
  });
});

test('without privateApi there is no API Gateway, VPC endpoint or private record', () => {
  const { template } = synthGateway();
  for (const type of ['AWS::ApiGateway::RestApi', 'AWS::ApiGateway::DomainNameV2', 'AWS::EC2::VPCEndpoint', 'AWS::Route53::RecordSet']) expect(resources(template, type)).toEqual([]);
  expect(onlyResource(template, 'AWS::Lambda::Function', 'Gateway').properties.Environment.Variables.GATEWAY_PRIVATE_API_DOMAIN).toBeUndefined();
});
