import { mintKey } from '../../lambda/auth/issue-key.ts';
import { newTokenKey } from '../../lambda/identity/secrets.ts';
import type { AwsJsonFake } from '../support/aws-json-fake.ts';
import { startDynamoCallLog, type DynamoCallLog } from '../support/dynamo-call-log.ts';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.ts';
import { ALICE, BOB, messagesWith } from '../support/sign-in-gateway.ts';
import { ScriptedBrowser, signIn } from '../support/sign-in.ts';
import { startFunctionSecrets, startSignInRuntime, type RealRuntime } from './real-runtime.ts';

/**
 * What one model request asks of DynamoDB on the Lambda path, counted on the wire between the
 * real runtime's function and the store, per kind of caller: the figures docs/keys-and-budgets.md
 * ("What a request costs in DynamoDB") states; each tally also shows that a warm request reads
 * neither the key nor the identity table (both are cached). Warm requests only: the first request of an
 * instance also reads the key or the session, which are then cached.
 */
let idp: TestIdp;
let secrets: AwsJsonFake;
let runtime: RealRuntime & { https: string };
let log: DynamoCallLog;
const bearers = new Map<string, string>();

beforeAll(async () => {
  idp = await startTestIdp({ users: [ALICE, BOB] });
  secrets = await startFunctionSecrets({ tokenKey: newTokenKey(), IDP_CLIENT_SECRET: idp.clientSecret });
  // Alice (engineering) shares a pool with her group; Bob (contractors) has caps only.
  runtime = await startSignInRuntime(idp, secrets, { caps: { default: { daily: 50, weekly: 150, monthly: 500 }, pools: { [ALICE.groups[0] as string]: { monthly: 1000 } } } }, {
    dynamoEndpoint: async (endpoint) => (log = await startDynamoCallLog(endpoint)).url,
  });
  const plain = mintKey({ name: 'plain' });
  const limited = mintKey({ name: 'limited', limits: { requestsPerMinute: 1000, microUsdPerDay: 50_000_000 } });
  await runtime.putKey(plain.record);
  await runtime.putKey(limited.record);
  bearers.set('key', plain.key);
  bearers.set('limited key', limited.key);
  for (const user of [ALICE, BOB]) bearers.set(user.sub, (await signIn(runtime.url, user, new ScriptedBrowser((target) => target.replace(runtime.https, runtime.url)))).access_token as string);
}, 120_000);

afterAll(async () => {
  await runtime?.close();
  await log?.close();
  await secrets?.close();
  await idp?.close();
});

/** Waits until the function has finished its invocation (the usage write runs after the answer). */
async function settled(): Promise<void> {
  for (let until = Date.now() + 5_000, calls = -1; Date.now() < until; ) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (runtime.lambda.api.idle() && log.calls.length === calls) return;
    calls = log.calls.length;
  }
  throw new Error('the function did not settle');
}

/** DynamoDB calls per request, by `operation table`, over `count` warm requests of one caller. */
async function callsPerRequest(caller: string, count = 4): Promise<Record<string, number>> {
  const bearer = bearers.get(caller) as string;
  expect((await messagesWith(runtime.url, bearer)).status).toBe(200);
  await settled();
  const from = log.calls.length;
  for (let i = 0; i < count; i += 1) expect((await messagesWith(runtime.url, bearer)).status).toBe(200);
  await settled();
  const tally: Record<string, number> = {};
  for (const call of log.calls.slice(from)) {
    const name = `${call.operation} ${call.table.replace(/^gateway-/, '')}`;
    tally[name] = (tally[name] ?? 0) + 1 / count;
  }
  return tally;
}

test('a key without limits: its day item and the usage event, both written after the answer', async () => {
  expect(await callsPerRequest('key')).toEqual({ 'UpdateItem usage': 1, 'PutItem stats': 1 });
});

test('a key with a rate and a dollar budget: its minute counter, its day items and a slot taken before the upstream call, the slot given back after', async () => {
  // UpdateItem: the minute counter, the slot taken and given back, the day item.
  expect(await callsPerRequest('limited key')).toEqual({ 'UpdateItem usage': 4, 'Query usage': 1, 'PutItem stats': 1 });
});

test('a signed-in person with caps: their day items read and a slot taken before, the slot given back and their day item written after', async () => {
  expect(await callsPerRequest(BOB.sub)).toEqual({ 'UpdateItem usage': 3, 'Query usage': 1, 'PutItem stats': 1 });
});

test("a signed-in person in a group pool: the same; the pool's rollup rows are cached 30 s per instance, so not read per request", async () => {
  expect(await callsPerRequest(ALICE.sub)).toEqual({ 'UpdateItem usage': 3, 'Query usage': 1, 'PutItem stats': 1 });
  expect(log.calls.filter((call) => call.operation === 'BatchGetItem')).toHaveLength(1);
});

test('nothing scans, and every write of a request is under 1 KB (one write unit each)', () => {
  expect(log.calls.length).toBeGreaterThan(40);
  expect(log.calls.filter((call) => call.operation === 'Scan')).toEqual([]);
  const requestWrites = log.calls.filter((call) => call.table !== 'gateway-identity' && (call.operation === 'UpdateItem' || call.operation === 'PutItem'));
  expect(Math.max(...requestWrites.map((call) => call.requestBytes))).toBeLessThan(1_024);
});
