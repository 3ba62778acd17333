import { mintKey } from '../../lambda/auth/issue-key.ts';
import { startAwsJsonFake, type AwsJsonFake } from '../support/aws-json-fake.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { fixture, sendJson, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';
import { FUNCTION_ROLE_CREDENTIALS, startRealRuntime } from './real-runtime.ts';

/**
 * lambda/handler.ts warms up during Lambda's Init (which an on-demand environment runs at a full
 * vCPU): it reads the upstream secret and opens the DynamoDB and upstream connections before the
 * runtime asks for the first invocation, bounded to 2 s and never fatal.
 */
let secrets: AwsJsonFake;
let upstream: UpstreamStub;
const secretReads: number[] = [];

beforeAll(async () => {
  secrets = await startAwsJsonFake({
    service: 'secretsmanager',
    targetPrefix: 'secretsmanager',
    credentials: [FUNCTION_ROLE_CREDENTIALS],
    handlers: {
      GetSecretValue: () => {
        secretReads.push(performance.now());
        return { output: { SecretString: JSON.stringify({ ant: 'sk-ant-warm' }) } };
      },
    },
  });
  upstream = await startUpstream();
});

afterAll(async () => {
  await Promise.all([secrets?.close(), upstream?.close()]);
});

beforeEach(() => {
  secretReads.length = 0;
});

/** A cold start through the production bundle; the secret reached through `secretsProxy`. */
async function coldStart(secretsProxy: TcpProxy, environment: Record<string, string> = {}) {
  let initDoneAt: number | undefined;
  let dynamo: TcpProxy | undefined;
  let dynamoConnectionsAtInitDone: number | undefined;
  let upstreamConnectionsAtInitDone: number | undefined;
  const upstreamProxy = await startTcpProxy(upstream.url);
  const runtime = await startRealRuntime({
    routing: { upstreams: { ant: { type: 'anthropic', baseUrl: upstreamProxy.url, apiKeyEnv: 'ANT_KEY' } }, routes: [{ model: '*', upstream: 'ant', allowUnpriced: true }] },
    timeoutMs: 15_000,
    environment: { GATEWAY_UPSTREAM_SECRET: 'gateway/upstreams', AWS_ENDPOINT_URL_SECRETSMANAGER: secretsProxy.url, ...environment },
    dynamoEndpoint: async (endpoint) => (dynamo = await startTcpProxy(endpoint)).url,
    onInitDone: () => {
      initDoneAt = performance.now();
      dynamoConnectionsAtInitDone = dynamo?.connections();
      upstreamConnectionsAtInitDone = upstreamProxy.connections();
    },
  });
  try {
    const minted = mintKey({ name: 'warm-up' });
    await runtime.putKey(minted.record);
    upstream.reply(sendJson(200, fixture('anthropic/text.json')));
    const sentAt = performance.now();
    const response = await fetch(`${runtime.url}/first/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${minted.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-x', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const body = await response.text();
    return {
      status: response.status,
      body,
      sentAt,
      initDoneAt,
      dynamoConnectionsAtInitDone,
      upstreamConnectionsAtInitDone,
      upstreamConnections: upstreamProxy.connections(),
      upstreamKey: upstream.requests.at(-1)?.headers['x-api-key'],
      stderr: runtime.lambda.stderr.join('\n'),
    };
  } finally {
    await runtime.close();
    await dynamo?.close();
    await upstreamProxy.close();
  }
}

test('the secret is read and the DynamoDB and upstream connections opened during Init; the first request reads nothing again and rides them', async () => {
  const proxy = await startTcpProxy(secrets.url);
  try {
    const run = await coldStart(proxy);
    expect(run.status).toBe(200);
    expect(run.upstreamKey).toBe('sk-ant-warm');
    expect(run.initDoneAt).toBeDefined();
    expect(secretReads).toHaveLength(1);
    expect(secretReads[0]).toBeLessThan(run.initDoneAt as number);
    expect(run.dynamoConnectionsAtInitDone).toBe(1);
    expect(run.upstreamConnectionsAtInitDone).toBe(1);
    expect(run.upstreamConnections).toBe(1);
    expect(proxy.connections()).toBe(1);
  } finally {
    await proxy.close();
  }
}, 60_000);

test('provisioned concurrency: no upstream connection is opened at Init (the provider could close it before the first request)', async () => {
  const proxy = await startTcpProxy(secrets.url);
  try {
    const run = await coldStart(proxy, { AWS_LAMBDA_INITIALIZATION_TYPE: 'provisioned-concurrency' });
    expect(run.status).toBe(200);
    expect(run.dynamoConnectionsAtInitDone).toBe(1);
    expect(run.upstreamConnectionsAtInitDone).toBe(0);
    expect(run.upstreamConnections).toBe(1);
  } finally {
    await proxy.close();
  }
}, 60_000);

test('a Secrets Manager that hangs during Init delays it by 2 s at most, and the request reads the secret itself', async () => {
  const proxy = await startTcpProxy(secrets.url, { stallFirst: 1 });
  try {
    const run = await coldStart(proxy);
    expect(run.status).toBe(200);
    expect(run.upstreamKey).toBe('sk-ant-warm');
    const initMs = (run.initDoneAt as number) - run.sentAt;
    expect(initMs).toBeGreaterThanOrEqual(1_900);
    expect(initMs).toBeLessThan(6_000);
    // The stalled read never reached the service; the request's own did, after Init.
    expect(secretReads).toHaveLength(1);
    expect(secretReads[0]).toBeGreaterThan(run.initDoneAt as number);
    expect(proxy.connections()).toBe(2);
    expect(run.stderr).not.toMatch(/error/i);
  } finally {
    await proxy.close();
  }
}, 60_000);
