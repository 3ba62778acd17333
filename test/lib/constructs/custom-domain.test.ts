import { settingsFromEnv } from '../../../lambda/config/settings.ts';
import { ORIGIN_VERIFY_HEADER } from '../../../lib/constructs/custom-domain.ts';
import { STACK_OUTPUTS } from '../../../lib/output-names.ts';
import { startGateway } from '../../support/gateway-harness.ts';
import { CUSTOM_DOMAIN, onlyResource, synthGateway } from '../synth.ts';

/** CloudFront's managed policies, by their documented ids. */
const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
const ALL_VIEWER_EXCEPT_HOST_HEADER = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';

describe('CustomDomain', () => {
  const { template, app } = synthGateway({ customDomain: CUSTOM_DOMAIN });
  const distribution = onlyResource(template, 'AWS::CloudFront::Distribution').properties.DistributionConfig;
  const origin = distribution.Origins[0];

  test('puts CloudFront in front of the Function URL as a streaming pass-through', () => {
    expect(distribution.Origins).toHaveLength(1);
    expect(origin.DomainName).toEqual({
      'Fn::Select': [2, { 'Fn::Split': ['/', { 'Fn::GetAtt': [onlyResource(template, 'AWS::Lambda::Url').logicalId, 'FunctionUrl'] }] }],
    });
    expect(origin.CustomOriginConfig).toMatchObject({ OriginProtocolPolicy: 'https-only', OriginReadTimeout: 120 });
    expect(distribution.DefaultCacheBehavior).toMatchObject({
      AllowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
      CachePolicyId: CACHING_DISABLED,
      OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER,
      Compress: false,
      ViewerProtocolPolicy: 'https-only',
    });
  });

  test('serves the domain with the given us-east-1 certificate over modern TLS', () => {
    expect(distribution.Aliases).toEqual([CUSTOM_DOMAIN.domainName]);
    expect(distribution.ViewerCertificate).toEqual({
      AcmCertificateArn: CUSTOM_DOMAIN.certificateArn,
      MinimumProtocolVersion: 'TLSv1.2_2021',
      SslSupportMethod: 'sni-only',
    });
  });

  test('aliases the name to the distribution in the given zone, without a lookup', () => {
    const records = Object.values(template.findResources('AWS::Route53::RecordSet')).map((record) => record.Properties);
    expect(records.map((record) => record.Type).sort()).toEqual(['A', 'AAAA']);
    for (const record of records) {
      expect(record).toMatchObject({
        HostedZoneId: CUSTOM_DOMAIN.hostedZoneId,
        Name: `${CUSTOM_DOMAIN.domainName}.`,
        AliasTarget: { DNSName: { 'Fn::GetAtt': [onlyResource(template, 'AWS::CloudFront::Distribution').logicalId, 'DomainName'] } },
      });
    }
    expect(app.synth().manifest.missing).toBeUndefined();
  });

  test('sends a generated origin-verify value that the function requires, never written in the template', () => {
    const generated = Object.entries(template.findResources('AWS::SecretsManager::Secret')).filter(([, secret]) => secret.Properties.GenerateSecretString);
    expect(generated).toHaveLength(1);
    const [secretId, secret] = generated[0] as [string, { Properties: Record<string, any> }];
    expect(secret.Properties.GenerateSecretString).toMatchObject({ ExcludePunctuation: true, IncludeSpace: false });
    expect(secret.Properties.GenerateSecretString.PasswordLength).toBeGreaterThanOrEqual(32);

    const dynamicReference = { 'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: secretId }, ':SecretString:::}}']] };
    expect(origin.OriginCustomHeaders).toEqual([{ HeaderName: ORIGIN_VERIFY_HEADER, HeaderValue: dynamicReference }]);
    const variables = onlyResource(template, 'AWS::Lambda::Function', 'Gateway').properties.Environment.Variables;
    expect(variables.GATEWAY_ORIGIN_SECRET).toEqual(dynamicReference);
  });

  test('the handler refuses a request without the header CloudFront adds, and serves one with it', async () => {
    // What the function sees once CloudFormation has resolved the reference.
    const settings = settingsFromEnv({ GATEWAY_ORIGIN_SECRET: 'resolved-origin-secret' });
    const harness = await startGateway({ config: { upstreams: { sim: { type: 'simulator' } }, routes: [{ model: 'sim-1', upstream: 'sim' }] }, settings });
    try {
      const { key } = await harness.issueKey();
      const models = (headers: Record<string, string>) => fetch(`${harness.url}/first/v1/models`, { headers: { 'x-api-key': key, ...headers } });
      expect((await models({})).status).toBe(403);
      expect((await models({ [ORIGIN_VERIFY_HEADER]: 'a-guess' })).status).toBe(403);
      expect((await models({ [ORIGIN_VERIFY_HEADER]: 'resolved-origin-secret' })).status).toBe(200);
    } finally {
      await harness.close();
    }
  });

  test('leaves the function permissions unchanged: CloudFormation, not the function, reads the origin secret', () => {
    const resources = onlyResource(template, 'AWS::IAM::Policy', 'Gateway').properties.PolicyDocument.Statement.map((statement: { Resource: unknown }) => statement.Resource);
    expect(JSON.stringify(resources)).not.toContain('OriginVerifySecret');
  });

  test('outputs the custom-domain base addresses next to the Function URL ones', () => {
    const outputs = template.toJSON().Outputs;
    expect(outputs[STACK_OUTPUTS.customDomainUrl].Value).toBe('https://ai.example.com/');
    expect(outputs[STACK_OUTPUTS.customDomainMessagesBaseUrl].Value).toBe('https://ai.example.com/first');
    expect(outputs[STACK_OUTPUTS.customDomainResponsesBaseUrl].Value).toBe('https://ai.example.com/second/v1');
    expect(outputs[STACK_OUTPUTS.functionUrl]).toBeDefined();
  });

  test('can leave the Function URL open and lengthen the origin read timeout', () => {
    const { template: open } = synthGateway({ customDomain: { ...CUSTOM_DOMAIN, refuseDirectRequests: false, originReadTimeoutSeconds: 180 } });
    const openOrigin = onlyResource(open, 'AWS::CloudFront::Distribution').properties.DistributionConfig.Origins[0];
    expect(openOrigin.OriginCustomHeaders).toBeUndefined();
    expect(openOrigin.CustomOriginConfig.OriginReadTimeout).toBe(180);
    expect(onlyResource(open, 'AWS::Lambda::Function', 'Gateway').properties.Environment.Variables.GATEWAY_ORIGIN_SECRET).toBeUndefined();
    expect(onlyResource(open, 'AWS::SecretsManager::Secret').properties.GenerateSecretString).toBeUndefined();
  });

  test('creates no CloudFront, DNS or origin secret without a custom domain', () => {
    const { template: plain } = synthGateway();
    plain.resourceCountIs('AWS::CloudFront::Distribution', 0);
    plain.resourceCountIs('AWS::Route53::RecordSet', 0);
    plain.resourceCountIs('AWS::SecretsManager::Secret', 1);
  });
});
