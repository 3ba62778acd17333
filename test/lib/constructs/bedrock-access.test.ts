import { Aws } from 'aws-cdk-lib';
import { createRouter, parseRoutingConfig } from '../../../lambda/config/routing.ts';
import { bedrockAccess } from '../../../lib/constructs/bedrock-access.ts';
import { onlyResource, synthGateway } from '../synth.ts';

const BEDROCK_ROUTING = {
  upstreams: {
    ant: { type: 'anthropic', apiKeyEnv: 'ANTHROPIC_API_KEY' },
    br: { type: 'bedrock', region: 'eu-west-1' },
  },
  routes: [
    { model: 'claude-sonnet-5', upstream: 'ant', fallbacks: [{ upstream: 'br', upstreamModel: 'eu.anthropic.claude-sonnet-5-v1:0' }] },
    { model: 'claude-haiku-4-5', upstream: 'br', upstreamModel: 'anthropic.claude-haiku-4-5-20251001-v1:0' },
    { model: 'claude-opus-4-8', targets: [{ upstream: 'br', upstreamModel: 'global.anthropic.claude-opus-4-8-v1:0' }] },
  ],
};

const INVOKE = ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'];

test('exactly what the routes name: a foundation model, a geographic and a global profile with their destinations', () => {
  const access = bedrockAccess(parseRoutingConfig(BEDROCK_ROUTING));
  expect(access.errors).toEqual([]);
  expect(access.warnings).toEqual([]);
  const euProfile = `arn:aws:bedrock:eu-west-1:${Aws.ACCOUNT_ID}:inference-profile/eu.anthropic.claude-sonnet-5-v1:0`;
  const globalProfile = `arn:aws:bedrock:eu-west-1:${Aws.ACCOUNT_ID}:inference-profile/global.anthropic.claude-opus-4-8-v1:0`;
  expect(access.statements).toEqual([
    { sid: expect.any(String), actions: INVOKE, resources: [euProfile] },
    { sid: expect.any(String), actions: INVOKE, resources: ['arn:aws:bedrock:*::foundation-model/anthropic.claude-sonnet-5-v1:0'], conditions: { StringEquals: { 'bedrock:InferenceProfileArn': euProfile } } },
    { sid: expect.any(String), actions: [...INVOKE, 'bedrock:CountTokens'], resources: ['arn:aws:bedrock:eu-west-1::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0'] },
    { sid: expect.any(String), actions: INVOKE, resources: [globalProfile] },
    { sid: expect.any(String), actions: INVOKE, resources: ['arn:aws:bedrock:*::foundation-model/anthropic.claude-opus-4-8-v1:0', 'arn:aws:bedrock:::foundation-model/anthropic.claude-opus-4-8-v1:0'], conditions: { StringEquals: { 'bedrock:InferenceProfileArn': globalProfile } } },
  ]);
  expect(new Set(access.statements.map((statement) => statement.sid)).size).toBe(access.statements.length);
});

test('a route passing client model names through Bedrock needs "anyModel", which is a * grant said at synth', () => {
  const glob = { upstreams: { br: { type: 'bedrock', region: 'us-east-1' } }, routes: [{ model: 'claude-*', upstream: 'br' }] };
  expect(bedrockAccess(parseRoutingConfig(glob)).errors).toEqual([expect.stringContaining('routes.0: "claude-*" reaches Bedrock upstream "br" with the client\'s model name')]);
  const any = bedrockAccess(parseRoutingConfig({ ...glob, upstreams: { br: { type: 'bedrock', region: 'us-east-1', anyModel: true } } }));
  expect(any.errors).toEqual([]);
  expect(any.warnings).toEqual([expect.stringContaining('"anyModel"')]);
  expect(any.statements[0]?.resources).toContain('arn:aws:bedrock:us-east-1::foundation-model/*');
});

test('"anyModel" grants models in the upstream\'s Region only: other Regions\' foundation models only through that Region\'s inference profiles', () => {
  const routing = { upstreams: { br: { type: 'bedrock', region: 'eu-west-1', anyModel: true } }, routes: [{ model: 'claude-*', upstream: 'br' }] };
  const { template } = synthGateway({ routing });
  const statements = onlyResource(template, 'AWS::IAM::Policy', 'Gateway').properties.PolicyDocument.Statement as { Action: string[]; Resource: unknown; Condition?: unknown }[];
  const bedrock = statements.filter((statement) => String(statement.Action).includes('bedrock:'));
  const inference = { 'Fn::Join': ['', ['arn:aws:bedrock:eu-west-1:', { Ref: 'AWS::AccountId' }, ':inference-profile/*']] };
  const application = { 'Fn::Join': ['', ['arn:aws:bedrock:eu-west-1:', { Ref: 'AWS::AccountId' }, ':application-inference-profile/*']] };
  expect(bedrock).toEqual([
    // (resources in the order the synthesized policy sorts them)
    { Effect: 'Allow', Sid: 'BedrockBrAnyModel', Action: ['bedrock:CountTokens', ...INVOKE], Resource: ['arn:aws:bedrock:eu-west-1::foundation-model/*', application, inference] },
    { Effect: 'Allow', Sid: 'BedrockBrAnyModelDestinations', Action: INVOKE, Resource: ['arn:aws:bedrock:*::foundation-model/*', 'arn:aws:bedrock:::foundation-model/*'], Condition: { StringLike: { 'bedrock:InferenceProfileArn': [inference, application] } } },
  ]);
  // No statement lets a foundation model of another Region be invoked directly.
  for (const statement of bedrock.filter((each) => each.Condition === undefined)) for (const resource of [statement.Resource].flat()) expect(JSON.stringify(resource)).not.toMatch(/bedrock:\*:|bedrock:::/);
});

test('Mantle upstreams get inference on the account\'s Mantle projects in their Region (no * resource); a Bedrock API key or another service gets no grant', () => {
  const access = bedrockAccess(
    parseRoutingConfig({
      upstreams: {
        mantle: { type: 'openai', baseUrl: 'https://bedrock-mantle.us-west-2.api.aws/v1', aws: { service: 'bedrock-mantle', region: 'us-west-2' } },
        keyed: { type: 'bedrock', region: 'us-east-1', apiKeyEnv: 'AWS_BEARER_TOKEN_BEDROCK' },
        other: { type: 'openai', baseUrl: 'https://example.com/v1', aws: { service: 'execute-api', region: 'us-east-1' } },
      },
      routes: [{ model: 'gpt-oss', upstream: 'mantle' }, { model: 'k', upstream: 'keyed', upstreamModel: 'anthropic.x-v1:0' }, { model: 'o', upstream: 'other' }],
    }),
  );
  expect(access.statements).toEqual([{ sid: expect.any(String), actions: ['bedrock-mantle:CreateInference', 'bedrock-mantle:CountTokens'], resources: [`arn:aws:bedrock-mantle:us-west-2:${Aws.ACCOUNT_ID}:project/*`] }]);
  expect(access.warnings).toEqual([expect.stringContaining('"execute-api": the stack grants nothing')]);
});

test('any upstream signed for service bedrock is granted its models: a bedrock upstream with an explicit aws block, Bedrock Runtime\'s OpenAI-compatible endpoint', () => {
  const access = bedrockAccess(
    parseRoutingConfig({
      upstreams: {
        signed: { type: 'bedrock', aws: { service: 'bedrock', region: 'eu-central-1' } },
        runtimeOpenai: { type: 'openai', baseUrl: 'https://bedrock-runtime.us-west-2.amazonaws.com/openai/v1', aws: { service: 'bedrock', region: 'us-west-2' } },
      },
      routes: [
        { model: 'claude', upstream: 'signed', upstreamModel: 'anthropic.claude-haiku-4-5-20251001-v1:0' },
        { model: 'openai.gpt-oss-120b-1:0', upstream: 'runtimeOpenai' },
      ],
    }),
  );
  expect(access.errors).toEqual([]);
  expect(access.warnings).toEqual([]);
  expect(access.statements).toEqual([
    { sid: expect.any(String), actions: [...INVOKE, 'bedrock:CountTokens'], resources: ['arn:aws:bedrock:eu-central-1::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0'] },
    { sid: expect.any(String), actions: [...INVOKE, 'bedrock:CountTokens'], resources: ['arn:aws:bedrock:us-west-2::foundation-model/openai.gpt-oss-120b-1:0'] },
  ]);
  const glob = { upstreams: { runtimeOpenai: { type: 'openai', baseUrl: 'https://bedrock-runtime.us-west-2.amazonaws.com/openai/v1', aws: { service: 'bedrock', region: 'us-west-2' } } }, routes: [{ model: 'gpt-*', upstream: 'runtimeOpenai' }] };
  expect(bedrockAccess(parseRoutingConfig(glob)).errors).toEqual([expect.stringContaining('"gpt-*" reaches Bedrock upstream "runtimeOpenai"')]);
  const any = bedrockAccess(parseRoutingConfig({ ...glob, upstreams: { runtimeOpenai: { ...glob.upstreams.runtimeOpenai, anyModel: true } } }));
  expect(any.errors).toEqual([]);
  expect(any.warnings).toEqual([expect.stringContaining('"anyModel"')]);
  expect(() => parseRoutingConfig({ ...glob, upstreams: { o: { type: 'openai', anyModel: true } }, routes: [{ model: 'x', upstream: 'o' }] })).toThrow('only upstreams signed for Bedrock take "anyModel"');
});

test('in the stack: the grants are on the function\'s role, and an all-Bedrock gateway has no upstream secret', () => {
  const { template } = synthGateway({ routing: { upstreams: { br: { type: 'bedrock', region: 'us-east-1' } }, routes: [{ model: 'claude-haiku-4-5', upstream: 'br', upstreamModel: 'anthropic.claude-haiku-4-5-20251001-v1:0' }] } });
  expect(Object.keys(template.findResources('AWS::SecretsManager::Secret'))).toEqual([]);
  const statements = onlyResource(template, 'AWS::IAM::Policy', 'Gateway').properties.PolicyDocument.Statement as { Action: string[]; Resource: unknown }[];
  expect(statements).toContainEqual(expect.objectContaining({ Action: ['bedrock:CountTokens', ...INVOKE], Resource: 'arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0' }));
  expect(statements.some((statement) => String(statement.Action).includes('secretsmanager'))).toBe(false);
  const environment = onlyResource(template, 'AWS::Lambda::Function', 'Gateway').properties.Environment.Variables as Record<string, unknown>;
  expect(environment.GATEWAY_UPSTREAM_SECRET).toBeUndefined();
  expect(() => synthGateway({ routing: { upstreams: { br: { type: 'bedrock', region: 'us-east-1' } }, routes: [{ model: 'claude-*', upstream: 'br' }] } })).toThrow(/cannot be deployed as it is/);
});

test('the grant names the service and Region the gateway signs for, read from the compiled upstream', () => {
  const routing = parseRoutingConfig({
    upstreams: { br: { type: 'bedrock', region: 'eu-west-1', aws: { service: 'bedrock', region: 'eu-west-1' } }, keyed: { type: 'bedrock', region: 'us-east-1', apiKeyEnv: 'AWS_BEARER_TOKEN_BEDROCK' } },
    routes: [{ model: 'claude', upstream: 'br', upstreamModel: 'anthropic.claude-haiku-4-5-20251001-v1:0', fallbacks: [{ upstream: 'keyed', upstreamModel: 'anthropic.claude-haiku-4-5-20251001-v1:0' }] }],
  });
  const signing = createRouter(routing).upstreams.get('br')?.aws;
  expect(signing).toEqual({ service: 'bedrock', region: 'eu-west-1' });
  // Only the signed upstream is granted; the one with a Bedrock API key needs no IAM.
  expect(bedrockAccess(routing).statements).toEqual([{ sid: expect.any(String), actions: [...INVOKE, 'bedrock:CountTokens'], resources: [`arn:aws:bedrock:${signing?.region}::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0`] }]);
});
