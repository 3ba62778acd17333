import { mintKey } from '../../lambda/auth/issue-key.ts';
import { aggregate } from '../../lambda/usage/aggregator.ts';
import type { AwsJsonFake } from '../support/aws-json-fake.ts';
import { startBedrockFake, type BedrockFake } from '../support/bedrock-fake.ts';
import { fixture, sendJson, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';
import { FUNCTION_ROLE_CREDENTIALS, startFunctionSecrets, startRealRuntime, type RealRuntime } from './real-runtime.ts';

/**
 * The deployed wiring under the real runtime: the production bundle reads its upstream keys from
 * Secrets Manager and signs Bedrock calls with the credentials Lambda puts in the environment,
 * both checked by fakes that verify the SigV4 signature (no AWS SDK in the bundle does it).
 */
let runtime: RealRuntime;
let secrets: AwsJsonFake;
let bedrock: BedrockFake;
let anthropic: UpstreamStub;
let key: string;
let keyId: string;

beforeAll(async () => {
  secrets = await startFunctionSecrets({ ant: 'sk-ant-from-the-secret' });
  bedrock = await startBedrockFake({ credentials: [FUNCTION_ROLE_CREDENTIALS] });
  anthropic = await startUpstream(sendJson(200, fixture('anthropic/text.json')));
  runtime = await startRealRuntime({
    routing: {
      upstreams: { ant: { type: 'anthropic', baseUrl: anthropic.url, apiKeyEnv: 'ANT_KEY' }, br: { type: 'bedrock', region: 'us-east-1', baseUrl: bedrock.url } },
      routes: [
        { model: 'claude-direct', upstream: 'ant' },
        { model: '*', upstream: 'br', upstreamModel: 'anthropic.claude-sonnet-4-5-20250929-v1:0' },
      ],
    },
    timeoutMs: 10_000,
    environment: { GATEWAY_UPSTREAM_SECRET: 'gateway/upstreams', AWS_ENDPOINT_URL_SECRETSMANAGER: secrets.url },
  });
  const minted = mintKey({ name: 'wiring' });
  await runtime.putKey(minted.record);
  key = minted.key;
  keyId = minted.record.id;
}, 90_000);

afterAll(async () => {
  await runtime?.close();
  await Promise.all([secrets?.close(), bedrock?.close(), anthropic?.close()]);
});

const ask = (model: string) =>
  fetch(`${runtime.url}/first/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }),
  });

test('the upstream key comes from the secret, read once with a signature Secrets Manager accepts', async () => {
  for (let i = 0; i < 2; i++) expect((await ask('claude-direct')).status).toBe(200);
  expect(anthropic.requests.map((request) => request.headers['x-api-key'])).toEqual(['sk-ant-from-the-secret', 'sk-ant-from-the-secret']);
  expect(secrets.calls).toEqual([{ operation: 'GetSecretValue', input: { SecretId: 'gateway/upstreams' } }]);
  expect(secrets.refused).toBe(0);
});

test('Bedrock is called with a signature made from the function role credentials', async () => {
  const response = await ask('claude-sonnet-4-5');
  expect(response.status).toBe(200);
  expect(((await response.json()) as { type: string }).type).toBe('message');
  expect(bedrock.requests.at(-1)?.modelId).toBe('anthropic.claude-sonnet-4-5-20250929-v1:0');
});

test('each request puts its usage event before its invocation ends; the aggregator folds them into the key\'s rollups', async () => {
  const from = new Date();
  for (const model of ['claude-direct', 'claude-sonnet-4-5']) expect((await ask(model)).status).toBe(200);
  // The invocation ends after its writes: once the runtime has taken the next one, or is idle.
  for (const until = Date.now() + 5_000; !runtime.lambda.api.idle() && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 10));
  const to = new Date();
  const result = await aggregate(runtime.stats, { now: () => to.getTime() + 4 * 60_000, stopAt: Number.POSITIVE_INFINITY, firstRunMinutes: 10 });
  expect(result.events).toBeGreaterThanOrEqual(2);
  const perKey = await runtime.rollups.totals('key', from, to, 'H');
  expect(perKey.find((entry) => entry.value === keyId)?.totals.requests).toBe(result.events);
  const perModel = await runtime.rollups.totals('model', from, to, 'H');
  // A name the config gives as is; a client's name under the renaming glob route counts as the route's target model.
  expect(perModel.map((entry) => entry.value).sort()).toEqual(['anthropic.claude-sonnet-4-5-20250929-v1:0', 'claude-direct']);
});
