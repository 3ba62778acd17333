import { gzipSync } from 'node:zlib';
import { mintKey } from '../../lambda/auth/issue-key.ts';
import { runSmokeChecks } from '../../bin/local/smoke-checks.ts';
import { DEFAULT_PACED_MODEL } from '../../bin/local/smoke-delivery.ts';
import { PRIVATE_API_STAGE } from '../../lib/constructs/private-api.ts';
import { startRestApiFront } from './rest-api-front.ts';
import { startRealRuntime, type RealRuntime } from './real-runtime.ts';

/**
 * The private API's path under the real runtime client: the production bundle, invoked with the
 * REST proxy events a private API sends (test/runtime/rest-api-front.ts), answers through the same
 * streaming prelude. The function is configured as the stack configures it (the config file in its
 * task root, GATEWAY_PRIVATE_API_DOMAIN), and serves the Function URL front beside it.
 */
const DOMAIN = 'gw.corp.example.com';
let runtime: RealRuntime;
let rest: { url: string; close(): Promise<void> };
let key: string;

beforeAll(async () => {
  runtime = await startRealRuntime({
    routing: {
      upstreams: { sim: { type: 'simulator' }, paced: { type: 'simulator', delayMs: 100 } },
      routes: [
        { model: DEFAULT_PACED_MODEL, upstream: 'paced' },
        { model: '*', upstream: 'sim' },
      ],
    },
    timeoutMs: 30_000,
    environment: { GATEWAY_PRIVATE_API_DOMAIN: DOMAIN },
  });
  rest = await startRestApiFront((event) => runtime.lambda.invoke(event), { domainName: DOMAIN, stage: PRIVATE_API_STAGE, vpceId: 'vpce-0a1b2c3d4e5f60718' });
  const minted = mintKey({ name: 'private-api' });
  await runtime.putKey(minted.record);
  key = minted.key;
}, 90_000);

afterAll(async () => {
  await rest?.close();
  await runtime?.close();
});

test('every smoke check passes through REST proxy events, streams delivered as written', async () => {
  const results = await runSmokeChecks({ url: rest.url, key, messagesModel: 'claude-sim', responsesModel: 'gpt-sim' });
  expect(results.filter((result) => !result.passed)).toEqual([]);
  expect(results.at(-1)).toMatchObject({ detail: expect.stringMatching(/^delivered as written: .* one every 100 ms/) });
});

test('a compressed body arrives byte for byte (every body is binary on the private API)', async () => {
  const body = gzipSync(JSON.stringify({ model: 'claude-sim', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }));
  const response = await fetch(`${rest.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': 'gzip' }, body });
  expect(response.status).toBe(200);
  expect(await response.json()).toMatchObject({ type: 'message', role: 'assistant' });
});

test('both fronts are served by the same function instance', async () => {
  const viaUrl = await fetch(`${runtime.url}/first/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-sim', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(viaUrl.status).toBe(200);
  await viaUrl.text();
  const refused = await fetch(`${rest.url}/second/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(refused.status).toBe(401);
  expect(await refused.json()).toMatchObject({ error: { type: expect.any(String) } });
  expect(runtime.lambda.starts).toHaveLength(1);
});
