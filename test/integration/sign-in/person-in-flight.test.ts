import { localDynamo } from '../../../bin/local/embedded-store.ts';
import { LEASE_PERIOD, personAccount } from '../../../lambda/usage/usage-table.ts';
import { startGateway, type Harness } from '../../support/gateway-harness.ts';
import { signIn } from '../../support/sign-in.ts';
import { ALICE, BOB, startSignInGateway, type SignInSetup } from '../../support/sign-in-gateway.ts';
import { fixture, replyGate, sendJson, startUpstream, type UpstreamStub } from '../../support/upstream-stub.ts';

/**
 * What bounds a person's overshoot of a cap (docs/sign-in.md, "How far a cap can be overshot"):
 * a person with caps holds at most GATEWAY_MAX_IN_FLIGHT_PER_KEY model requests in progress, one
 * lease each in the usage table, whatever they come with (sessions, keys tied to them) and on
 * whichever instance. A person without caps takes no lease.
 */
const CAP = 2;
let upstream: UpstreamStub;
let setup: SignInSetup;
let second: Harness;
/** Every upstream call waits 300 ms, or, in a batch, until the whole batch has asked (replyGate). */
let gate: ReturnType<typeof replyGate>;

beforeAll(async () => {
  upstream = await startUpstream();
  gate = replyGate(upstream);
  upstream.reply(async (request, res) => {
    await gate.passage();
    sendJson(200, JSON.parse(fixture('anthropic/text.json')))(request, res);
  });
  const upstreams = { ant: { type: 'anthropic', baseUrl: upstream.url } };
  const routes = [{ model: 'claude-*', upstream: 'ant' }];
  const identity = { caps: { default: { daily: 50 }, groups: { contractors: { daily: null } }, groupMode: 'max' } };
  setup = await startSignInGateway({ upstreams, routes, identity, harness: { settings: { maxInFlightPerKey: CAP } } });
  // A second instance on the same tables: what two concurrent Lambda instances are.
  second = await startGateway({ config: { upstreams, routes, identity: { issuer: setup.idp.issuer, clientId: setup.idp.clientId, ...identity } }, shareStoreWith: setup.gateway, settings: { maxInFlightPerKey: CAP } });
});

afterAll(async () => {
  await second?.close();
  await setup?.close();
  await upstream?.close();
});

async function turn(harness: Harness, bearer: string): Promise<{ status: number; message?: string }> {
  const response = await fetch(`${harness.url}/first/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const body = (await response.json()) as { error?: { message: string } };
  return { status: response.status, ...(body.error ? { message: body.error.message } : {}) };
}

async function leases(account: string): Promise<string[] | undefined> {
  const { Item } = await localDynamo(setup.gateway.storeInfo.endpoint).call('GetItem', { TableName: setup.gateway.storeInfo.usageTable, Key: { keyId: { S: account }, period: { S: LEASE_PERIOD } } });
  return Item === undefined ? undefined : (Item.leases?.SS ?? []);
}

test('sessions and a key tied to the person, on two instances: at most the cap in progress, the rest 429; every slot given back', async () => {
  const session = (await signIn(setup.gateway.url, ALICE)).access_token as string;
  const { key } = await setup.gateway.issueKey({ owner: ALICE.sub });
  const bearers = [session, key, session, key, session, key];
  // The upstream answers only once every request is held there or refused (replyGate).
  const answers = await gate.batch(bearers.length, (index) => turn(index % 2 ? second : setup.gateway, bearers[index] as string));
  const served = answers.filter((answer) => answer.status === 200).length;
  expect(served).toBeGreaterThan(0);
  expect(served).toBeLessThanOrEqual(CAP);
  const refused = answers.filter((answer) => answer.status !== 200);
  expect(refused).toEqual(Array.from({ length: 6 - served }, () => ({ status: 429, message: `Your account already has ${CAP} requests in progress, the most it may have at once; retry when one has finished.` })));
  for (const until = Date.now() + 5_000; setup.gateway.server.inFlight + second.server.inFlight > 0 && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(await leases(personAccount(ALICE.sub))).toEqual([]);
  expect((await turn(second, key)).status).toBe(200);
});

test('a person without caps (a group with no daily cap under groupMode max) takes no lease and is not limited in flight', async () => {
  const session = (await signIn(setup.gateway.url, BOB)).access_token as string;
  const answers = await Promise.all(Array.from({ length: 4 }, () => turn(setup.gateway, session)));
  expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
  expect(await leases(personAccount(BOB.sub))).toBeUndefined();
});
