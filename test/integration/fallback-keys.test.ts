import { bareSecretReader } from '../../lambda/aws/secrets.ts';
import { SecretsManagerCredentials } from '../../lambda/upstream/credentials.ts';
import { JSON_FAKE_CREDENTIALS, startAwsJsonFake, type AwsJsonFake } from '../support/aws-json-fake.ts';
import { logOf, startGateway, type Harness } from '../support/gateway-harness.ts';
import { fixture, sendJson, sendSse, startUpstream, type StubHandler, type UpstreamStub } from '../support/upstream-stub.ts';

/**
 * Several keys per upstream, as on AWS: the keys are a list in the upstream secret's member (read
 * from a SigV4-verifying Secrets Manager fake). Requests spread over the keys by conversation and
 * keep their key; a key the upstream refuses rests, is named in the log by position only, and
 * another key serves the same request at once; after a 401/403 the secret is read again.
 */
const textStream = fixture('anthropic/text-stream.sse');
let secret = { pool: ['sk-pool-1', 'sk-pool-2', 'sk-pool-3'] };
let secrets: AwsJsonFake;
let upstream: UpstreamStub;
let gateway: Harness;
let key: string;
/** Per key, a session id the gateway serves with it first. */
const sessions = new Map<string, string>();

beforeAll(async () => {
  secrets = await startAwsJsonFake({
    service: 'secretsmanager',
    targetPrefix: 'secretsmanager',
    handlers: { GetSecretValue: () => ({ output: { Name: 'gateway/upstreams', SecretString: JSON.stringify(secret), VersionId: 'v1' } }) },
  });
  upstream = await startUpstream(sendSse(textStream));
  const read = bareSecretReader({ region: 'us-east-1', endpoint: secrets.url, credentials: async () => JSON_FAKE_CREDENTIALS });
  gateway = await startGateway({
    config: { upstreams: { pool: { type: 'anthropic', baseUrl: upstream.url, apiKeyEnv: ['POOL_1', 'POOL_2', 'POOL_3'] } }, routes: [{ model: '*', upstream: 'pool' }] },
    credentials: new SecretsManagerCredentials('gateway/upstreams', read),
  });
  ({ key } = await gateway.issueKey());
  // Learn which session id each key serves first, from the gateway itself (rendezvous hashing).
  for (let i = 0; sessions.size < secret.pool.length && i < 200; i++) {
    const from = upstream.requests.length;
    await (await ask(`keys-probe-${i}`)).text();
    const used = keysSince(from)[0] as string;
    if (!sessions.has(used)) sessions.set(used, `keys-probe-${i}`);
  }
});

afterAll(async () => {
  await gateway.close();
  await Promise.all([upstream.close(), secrets.close()]);
});

const ask = (session: string, stream = false) =>
  fetch(`${gateway.url}/first/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-claude-code-session-id': session },
    body: JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 20, stream, messages: [{ role: 'user', content: 'hi' }] }),
  });

/** Answers by upstream key: `refused` maps a key to the status it gets; the others are served. */
function byKey(refused: Record<string, number>): StubHandler {
  return (request, res) => {
    const status = refused[request.headers['x-api-key'] as string];
    if (status === undefined) return sendSse(textStream)(request, res);
    return sendJson(status, { type: 'error', error: { type: status === 401 ? 'authentication_error' : 'permission_error', message: 'invalid x-api-key' } })(request, res);
  };
}

const keysSince = (from: number) => upstream.requests.slice(from).map((request) => request.headers['x-api-key'] as string);

/** A session id whose first choice is `wanted` (found once by asking the gateway, then reused). */
function sessionUsing(wanted: string): string {
  const known = sessions.get(wanted);
  if (!known) throw new Error(`no session known for ${wanted}`);
  return known;
}

test('one conversation keeps one key over 100 requests; conversations spread over every key', async () => {
  upstream.reply(sendSse(textStream));
  const from = upstream.requests.length;
  for (let i = 0; i < 100; i++) await (await ask('keys-sticky')).text();
  expect(new Set(keysSince(from)).size).toBe(1);
  const spread = upstream.requests.length;
  for (let i = 0; i < 30; i++) await (await ask(`keys-spread-${i}`)).text();
  expect(new Set(keysSince(spread))).toEqual(new Set(secret.pool));
});

test('a key answered 401 rests and is named by position; another key serves the same request at once; the secret is read again', async () => {
  const from = upstream.requests.length;
  await (await ask('keys-401')).text();
  const mine = keysSince(from)[0] as string;
  const position = secret.pool.indexOf(mine);
  const readsBefore = secrets.calls.length;
  upstream.reply(byKey({ [mine]: 401 }));
  const response = await ask('keys-401', true);
  expect(response.status).toBe(200);
  expect(await response.text()).toBe(textStream);
  const [refused, served] = keysSince(from + 1);
  expect(refused).toBe(mine);
  expect(served).not.toBe(mine);
  const line = await logOf(gateway, response.headers.get('request-id'));
  expect(line.attempts).toEqual([
    { upstream: 'pool', key: position, keyRestedMs: 600_000, status: 401, ms: expect.any(Number) },
    { upstream: 'pool', key: secret.pool.indexOf(served as string), status: 200, ms: expect.any(Number) },
  ]);
  expect(JSON.stringify(line)).not.toMatch(/sk-pool/);
  // The operator may have rotated the refused key: the secret is read again.
  expect(secrets.calls.length).toBeGreaterThan(readsBefore);
  // The refused key stays out of this conversation while it rests.
  upstream.reply(sendSse(textStream));
  const next = upstream.requests.length;
  await (await ask('keys-401')).text();
  expect(keysSince(next)).toEqual([served]);
});

test('a 403 on the last key not resting is the answer, and the log still names the key and its rest', async () => {
  const from = upstream.requests.length;
  upstream.reply(sendSse(textStream));
  await (await ask('keys-403')).text();
  const mine = keysSince(from)[0] as string;
  // Every other key is refused first (each rests), then this conversation's own key.
  const others = secret.pool.filter((each) => each !== mine);
  upstream.reply(byKey(Object.fromEntries(others.map((each) => [each, 403]))));
  for (const other of others) {
    const session = sessionUsing(other);
    await (await ask(session)).text();
  }
  upstream.reply(byKey(Object.fromEntries(secret.pool.map((each) => [each, 403]))));
  const response = await ask('keys-403');
  expect(response.status).toBe(403);
  expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'permission_error' } });
  const line = await logOf(gateway, response.headers.get('request-id'));
  expect(line.attempts).toEqual([{ upstream: 'pool', key: secret.pool.indexOf(mine), keyRestedMs: 600_000, status: 403, ms: expect.any(Number) }]);
  expect(JSON.stringify(line)).not.toMatch(/sk-pool/);
});
