import type { PolicyViolation } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { AwsSolutionsChecks, ServerlessChecks, type NagPack } from 'cdk-nag';
import { CUSTOM_DOMAIN, PRIVATE_API, PRIVATE_API_EXISTING_ENDPOINT, onlyResource, routingWithIdentity, synthGateway } from './synth.ts';

/**
 * The stack against cdk-nag's AwsSolutions and Serverless packs: no finding, error or warning,
 * may stay unacknowledged. Findings that do not apply to this product are acknowledged where the
 * resource is made (lib/constructs/*), with the reason, through CDK's Validations API (cdk-nag 3
 * replaced NagSuppressions with it).
 */
const VARIANTS: [string, Record<string, unknown>][] = [
  ['the default stack', {}],
  ['with a custom domain', { customDomain: CUSTOM_DOMAIN }],
  ['with a custom domain that accepts direct requests', { customDomain: { ...CUSTOM_DOMAIN, refuseDirectRequests: false } }],
  ['with CORS, reserved concurrency and X-Ray tracing', { cors: { allowedOrigins: ['https://app.example.com'] }, reservedConcurrency: 10, tracing: true }],
  ['with sign-in and a private API whose endpoint it creates', { routing: routingWithIdentity(), privateApi: PRIVATE_API }],
  ['with a private API through an existing endpoint, access logs, tracing and no Function URL', { privateApi: { ...PRIVATE_API_EXISTING_ENDPOINT, accessLogs: true, functionUrl: false }, tracing: true }],
  ['with a private API beside the custom domain', { customDomain: CUSTOM_DOMAIN, privateApi: PRIVATE_API }],
  [
    'with Bedrock: a cross-Region profile, a global one, anyModel and Mantle',
    {
      routing: {
        upstreams: {
          ant: { type: 'anthropic', apiKeyEnv: 'ANTHROPIC_API_KEY' },
          br: { type: 'bedrock', region: 'us-east-1' },
          brAny: { type: 'bedrock', region: 'us-west-2', anyModel: true },
          mantle: { type: 'openai', baseUrl: 'https://bedrock-mantle.us-west-2.api.aws/v1', aws: { service: 'bedrock-mantle', region: 'us-west-2' } },
        },
        routes: [
          { model: 'claude-sonnet-5', upstream: 'ant', fallbacks: [{ upstream: 'br', upstreamModel: 'us.anthropic.claude-sonnet-5-v1:0' }] },
          { model: 'claude-opus-4-8', upstream: 'br', upstreamModel: 'global.anthropic.claude-opus-4-8-v1:0' },
          { model: 'claude-*', upstream: 'brAny' },
          { model: 'gpt-oss-*', upstream: 'mantle' },
        ],
      },
    },
  ],
];

const packs = (): NagPack[] => [new AwsSolutionsChecks(undefined, { verbose: true }), new ServerlessChecks(undefined, { verbose: true })];

function findings(overrides: Record<string, unknown>): string[] {
  const { stack } = synthGateway(overrides);
  return packs().flatMap((pack) =>
    pack.validateScope(stack).violations.map(
      (violation: PolicyViolation) =>
        `${violation.severity} ${violation.ruleName} at ${violation.violatingResources.map((resource) => resource.constructPath ?? resource.resourceLogicalId).join(', ')}: ${violation.description}`,
    ),
  );
}

test.each(VARIANTS)('%s has no unacknowledged cdk-nag finding', (_name, overrides) => {
  expect(findings(overrides)).toEqual([]);
});

test('the packs do report what the stack would otherwise hide: an unacknowledged finding fails', () => {
  // A secret the stack does not acknowledge, added to the default stack.
  const { stack } = synthGateway();
  new Secret(stack, 'Unacknowledged');
  const reported = packs().flatMap((pack) => pack.validateScope(stack).violations.map((violation) => violation.ruleName));
  expect(reported).toEqual(['AwsSolutions-SMG4']);
});

test('tracing: off by default, Active when set, with the X-Ray write permission as the one wildcard', () => {
  expect(onlyResource(synthGateway().template, 'AWS::Lambda::Function', 'Gateway').properties.TracingConfig).toBeUndefined();
  const { template } = synthGateway({ tracing: true });
  expect(onlyResource(template, 'AWS::Lambda::Function', 'Gateway').properties.TracingConfig).toEqual({ Mode: 'Active' });
  const statements = onlyResource(template, 'AWS::IAM::Policy', 'Gateway').properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[];
  expect(statements.filter((statement) => statement.Resource === '*')).toEqual([{ Effect: 'Allow', Action: ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'], Resource: '*' }]);
});
