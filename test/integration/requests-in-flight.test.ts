import { LEASE_PERIOD } from '../../lambda/usage/usage-table.ts';
import { startGateway, type Harness } from '../support/gateway-harness.ts';
import { withinOneMinute } from '../support/minute-window.ts';
import { fixture, replyGate, sendJson, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';

/**
 * Issue 19, item 9. The token counts reach the upstream, so they count against a key's requests
 * per minute and are refused once its budget is spent; and requests in flight per key are
 * capped across instances (lease items in the usage table), which bounds how far concurrent
 * requests can overshoot a budget: checked before a request, charged after it.
 */
const CAP = 4;
/** The Anthropic answer every request gets, after 300 ms: 1,000 input and 500 output tokens of claude-sonnet-5 ($2 / $10 per million): $0.007. */
const COST_MICRO_USD = 1000 * 2 + 500 * 10;

let upstream: UpstreamStub;
let gateway: Harness;
let second: Harness;

const config = (url: string) => ({ upstreams: { ant: { type: 'anthropic', baseUrl: url } }, routes: [{ model: 'claude-*', upstream: 'ant' }] });

/** Every upstream call waits 300 ms, or, in a batch, until the whole batch has asked (replyGate). */
let gate: ReturnType<typeof replyGate>;

beforeAll(async () => {
  upstream = await startUpstream();
  gate = replyGate(upstream);
  upstream.reply(async (request, res) => {
    await gate.passage();
    const counting = request.url.endsWith('/count_tokens');
    sendJson(200, counting ? { input_tokens: 42 } : { ...JSON.parse(fixture('anthropic/text.json')), usage: { input_tokens: 1000, output_tokens: 500, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } })(request, res);
  });
  gateway = await startGateway({ config: config(upstream.url), settings: { maxInFlightPerKey: CAP } });
  // A second instance on the same tables: what two concurrent Lambda instances are.
  second = await startGateway({ config: config(upstream.url), shareStoreWith: gateway, settings: { maxInFlightPerKey: CAP } });
});

afterAll(async () => {
  await second.close();
  await gateway.close();
  await upstream.close();
});

async function post(harness: Harness, key: string, path: string, body: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const response = await fetch(`${harness.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

const turn = { model: 'claude-sonnet-5', max_tokens: 600, messages: [{ role: 'user', content: 'hi' }] };
const count = { model: 'claude-sonnet-5', messages: [{ role: 'user', content: 'hi' }] };

async function spentMicroUsd(id: string): Promise<number> {
  for (const until = Date.now() + 5_000; gateway.server.inFlight + second.server.inFlight > 0 && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 10));
  return (await gateway.usage.days(id, '2000-01-01')).reduce((sum, day) => sum + day.costMicroUsd, 0);
}

/** The key's lease item, as the table holds it. */
async function leases(id: string): Promise<string[] | undefined> {
  const { localDynamo } = await import('../../bin/local/embedded-store.ts');
  const { Item } = await localDynamo(gateway.storeInfo.endpoint).call('GetItem', { TableName: gateway.storeInfo.usageTable, Key: { keyId: { S: id }, period: { S: LEASE_PERIOD } } });
  return Item === undefined ? undefined : (Item.leases?.SS ?? []);
}

describe('the token counts reach the upstream, so key limits apply to them', () => {
  test('they count against requests per minute, in both directions', async () => {
    // Four requests of 300 ms each, all in one minute's window.
    await withinOneMinute(15);
    const { key } = await gateway.issueKey({ limits: { requestsPerMinute: 1 } });
    expect((await post(gateway, key, '/first/v1/messages/count_tokens', count)).status).toBe(200);
    const refused = await post(gateway, key, '/first/v1/messages', turn);
    expect({ status: refused.status, type: refused.body.error.type }).toEqual({ status: 429, type: 'rate_limit_error' });
    const other = await gateway.issueKey({ limits: { requestsPerMinute: 1 } });
    expect((await post(gateway, other.key, '/first/v1/messages', turn)).status).toBe(200);
    expect((await post(second, other.key, '/first/v1/messages/count_tokens', count)).status).toBe(429);
  });

  test('a spent budget refuses them too, before the upstream is called', async () => {
    const { key } = await gateway.issueKey({ limits: { microUsdPerDay: 1000 } });
    expect((await post(gateway, key, '/first/v1/messages', turn)).status).toBe(200);
    const sent = upstream.requests.length;
    const refused = await post(second, key, '/first/v1/messages/count_tokens', count);
    expect({ status: refused.status, type: refused.body.error.type }).toEqual({ status: 429, type: 'billing_error' });
    const responses = await post(gateway, key, '/second/v1/responses/input_tokens', { model: 'claude-sonnet-5', input: 'hi' });
    expect({ status: responses.status, code: responses.body.error.code }).toEqual({ status: 429, code: 'insufficient_quota' });
    expect(upstream.requests.length).toBe(sent);
  });
});

describe('requests in flight per key are capped across instances', () => {
  test('20 concurrent requests on a $0.01/day key, half on each instance: at most the cap pass, so the overshoot is at most the cap times one request', async () => {
    const { key, id } = await gateway.issueKey({ limits: { microUsdPerDay: 10_000 } });
    const answers = await gate.batch(20, (index) => post(index % 2 ? second : gateway, key, '/first/v1/messages', turn));
    const served = answers.filter((answer) => answer.status === 200).length;
    const refused = answers.filter((answer) => answer.status === 429);
    expect(served).toBeGreaterThan(0);
    expect(served).toBeLessThanOrEqual(CAP);
    expect(refused).toHaveLength(20 - served);
    expect(refused[0]?.body.error.message).toContain(`already has ${CAP} requests in progress`);
    expect(await spentMicroUsd(id)).toBeLessThanOrEqual(CAP * COST_MICRO_USD);
    // Every slot was given back.
    expect(await leases(id)).toEqual([]);
    // The budget is now spent: the next request is refused as such.
    expect((await post(gateway, key, '/first/v1/messages', turn)).body.error.type).toBe('billing_error');
  });

  test('a key without a budget holds no lease (no extra read or write); its own maxInFlight caps it anyway', async () => {
    const free = await gateway.issueKey();
    expect((await post(gateway, free.key, '/first/v1/messages', turn)).status).toBe(200);
    expect(await leases(free.id)).toBeUndefined();
    const capped = await gateway.issueKey({ limits: { maxInFlight: 1 } });
    const answers = await gate.batch(3, (index) => post(index % 2 ? second : gateway, capped.key, '/first/v1/messages', turn));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 429, 429]);
  });

  test("a lease whose holder died stops counting at its expiry: a full set of expired leases does not lock the key out", async () => {
    const { key, id } = await gateway.issueKey({ limits: { maxInFlight: 2 } });
    const { localDynamo } = await import('../../bin/local/embedded-store.ts');
    const past = Math.floor(Date.now() / 1000) - 1;
    const future = Math.floor(Date.now() / 1000) + 600;
    const put = (held: string[]) => localDynamo(gateway.storeInfo.endpoint).call('PutItem', { TableName: gateway.storeInfo.usageTable, Item: { keyId: { S: id }, period: { S: LEASE_PERIOD }, leases: { SS: held } } });
    await put([`${past}#req_dead1`, `${past}#req_dead2`]);
    expect((await post(gateway, key, '/first/v1/messages', turn)).status).toBe(200);
    // Live leases of another instance (a request still running there) do count.
    await put([`${future}#req_live1`, `${future}#req_live2`]);
    expect((await post(gateway, key, '/first/v1/messages', turn)).status).toBe(429);
  });
});

test("npm start forgets the leases a killed run left in its embedded store (its store serves that one process)", async () => {
  const { key, id } = await gateway.issueKey({ limits: { maxInFlight: 1 } });
  const { localDynamo } = await import('../../bin/local/embedded-store.ts');
  const future = Math.floor(Date.now() / 1000) + 600;
  await localDynamo(gateway.storeInfo.endpoint).call('PutItem', { TableName: gateway.storeInfo.usageTable, Item: { keyId: { S: id }, period: { S: LEASE_PERIOD }, leases: { SS: [`${future}#req_killed`] } } });
  expect((await post(gateway, key, '/first/v1/messages', turn)).status).toBe(429);
  await gateway.usage.forgetLeases();
  expect(await leases(id)).toEqual([]);
  expect((await post(gateway, key, '/first/v1/messages', turn)).status).toBe(200);
});
