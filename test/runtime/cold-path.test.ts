import { fileURLToPath } from 'node:url';
import { mintKey } from '../../lambda/auth/issue-key.ts';
import type { AwsJsonFake } from '../support/aws-json-fake.ts';
import { eventually } from '../support/processes.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { fixture, sendJson, sendSse, sseEvents, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';
import { startFunctionSecrets, startRealRuntime, type RealRuntime } from './real-runtime.ts';

/**
 * What a cold start makes Node load, under the real runtime: the production bundle's import, a
 * key lookup, the secret read and upstream calls, streamed and not, translated and not. Node's
 * fetch (undici) and what it drags in (http2, assert, readline, zlib) cost about 35 ms of
 * CPU at a full core, three times that at 512 MB; the request path never needs them, so a change
 * that loads them again (a global Response or Headers, an `import http from 'node:http'`) fails here.
 * Nor node:http and worker_threads: the gateway's calls and its own runtime client
 * (lambda/runtime-client/) speak HTTP/1.1 on sockets of their own; AWS's runtime client loads both.
 */
const REPORTER = fileURLToPath(new URL('./fixtures/report-modules.mjs', import.meta.url));
const AVOIDED = /internal\/deps\/undici|^NativeModule (http|http2|assert|readline|worker_threads)$/;

let runtime: RealRuntime;
let secrets: AwsJsonFake;
let upstream: UpstreamStub;
let key: string;
/** TCP connections the function opens to each service: keep-alive means one each, however many requests. */
const counters: Record<'dynamodb' | 'secrets' | 'upstream', TcpProxy | undefined> = { dynamodb: undefined, secrets: undefined, upstream: undefined };

beforeAll(async () => {
  secrets = await startFunctionSecrets({ ant: 'sk-ant-cold' });
  upstream = await startUpstream();
  counters.secrets = await startTcpProxy(secrets.url);
  counters.upstream = await startTcpProxy(upstream.url);
  runtime = await startRealRuntime({
    routing: { upstreams: { ant: { type: 'anthropic', baseUrl: counters.upstream.url, apiKeyEnv: 'ANT_KEY' } }, routes: [{ model: '*', upstream: 'ant', allowUnpriced: true }] },
    timeoutMs: 10_000,
    environment: { GATEWAY_UPSTREAM_SECRET: 'gateway/upstreams', AWS_ENDPOINT_URL_SECRETSMANAGER: counters.secrets.url, NODE_OPTIONS: `--import=${REPORTER}` },
    dynamoEndpoint: async (endpoint) => (counters.dynamodb = await startTcpProxy(endpoint)).url,
  });
  const minted = mintKey({ name: 'cold' });
  await runtime.putKey(minted.record);
  key = minted.key;
}, 90_000);

afterAll(async () => {
  await runtime?.close();
  await Promise.all([secrets?.close(), upstream?.close(), ...Object.values(counters).map((counter) => counter?.close())]);
});

const post = (path: string, body: unknown) =>
  fetch(`${runtime.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function loadedModules(): Promise<string[]> {
  const { stderr, starts } = runtime.lambda;
  const before = stderr.length;
  process.kill(starts[0]?.pid as number, 'SIGUSR2');
  await eventually(() => expect(stderr.length).toBeGreaterThan(before));
  return (JSON.parse(stderr.at(-1) as string) as { loadedModules: string[] }).loadedModules;
}

test('a cold start and its first requests load neither fetch (undici) nor http, http2, assert, readline or worker_threads', async () => {
  upstream.reply(sendJson(200, fixture('anthropic/text.json')));
  const first = await post('/first/v1/messages', { model: 'claude-x', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
  expect(first.status).toBe(200);
  await first.text();
  upstream.reply(sendSse(sseEvents(fixture('anthropic/text-stream.sse'))));
  const translated = await post('/second/v1/responses', { model: 'claude-x', input: 'hi', stream: true });
  expect(translated.status).toBe(200);
  expect(await translated.text()).toContain('response.completed');
  expect(secrets.calls).toHaveLength(1);

  const loaded = await loadedModules();
  // The report itself is sound: the modules the request path does use are listed.
  expect(loaded).toEqual(expect.arrayContaining(['NativeModule net', 'NativeModule tls', 'NativeModule crypto']));
  expect(loaded.filter((name) => AVOIDED.test(name))).toEqual([]);
  expect(runtime.lambda.starts).toHaveLength(1);
});

test('later requests open no connection: the first ones to DynamoDB, Secrets Manager and the upstream are reused', async () => {
  const counts = () => ({ dynamodb: counters.dynamodb?.connections(), secrets: counters.secrets?.connections(), upstream: counters.upstream?.connections() });
  const logged = () => runtime.lambda.stdout.filter((line) => line.includes('"msg":"request"')).length;
  // After the cold start's requests (the test above), their writes after the answer included.
  await eventually(() => expect(logged()).toBe(2));
  const afterColdStart = counts();
  // The secret is read once; DynamoDB may have had three calls at once (the usage record, the
  // usage event and the lastUsedAt stamp, all after the first answer), so up to three connections.
  expect(afterColdStart.secrets).toBe(1);
  expect(afterColdStart.dynamodb).toBeLessThanOrEqual(3);
  upstream.reply(sendJson(200, fixture('anthropic/text.json')));
  for (let i = 0; i < 5; i++) {
    const response = await post('/first/v1/messages', { model: 'claude-x', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    expect(response.status).toBe(200);
    await response.text();
  }
  await eventually(() => expect(logged()).toBe(7));
  expect(counts()).toEqual(afterColdStart);
  expect(runtime.lambda.starts).toHaveLength(1);
});
