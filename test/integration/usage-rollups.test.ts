import { aggregate } from '../../lambda/usage/aggregator.ts';
import type { ValueTotals } from '../../lambda/usage/rollups.ts';
import { personAccount, utcDay } from '../../lambda/usage/usage-table.ts';
import { logOf, startGateway, type Harness } from '../support/gateway-harness.ts';
import { signIn } from '../support/sign-in.ts';
import { ALICE, messagesWith, startSignInGateway } from '../support/sign-in-gateway.ts';
import { fixture, sendJson, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';

/**
 * Requests with keys through the whole gateway, on both runtimes' write paths: Lambda's (an event
 * per request, folded by the aggregator) and npm start's (folded in memory, written at a flush).
 * The rollups must show exactly what the request log lines say was served and charged.
 */
let anthropicApi: UpstreamStub;
let lambda: Harness;
let local: Harness;

const config = (url: string) => ({
  upstreams: { ant: { type: 'anthropic', baseUrl: url }, dead: { type: 'anthropic', baseUrl: 'http://127.0.0.1:9' }, sim: { type: 'simulator' } },
  routes: [
    { model: 'team-fast', upstream: 'ant', upstreamModel: 'claude-sonnet-5' },
    // Made-up names must reach the upstream (to be refused there): these globs pass unpriced names on.
    { model: 'claude-*', upstream: 'ant', allowUnpriced: true },
    { model: 'dead-*', upstream: 'dead', allowUnpriced: true },
    { model: 'sim-*', upstream: 'sim' },
  ],
});

beforeAll(async () => {
  anthropicApi = await startUpstream();
  lambda = await startGateway({ config: config(anthropicApi.url) });
  local = await startGateway({ config: config(anthropicApi.url), settings: { usageFlushMs: 60_000 } });
});

afterAll(async () => {
  await lambda.close();
  await local.close();
  await anthropicApi.close();
});

const ok = sendJson(200, JSON.parse(fixture('anthropic/text.json')));
const notFound = sendJson(404, { type: 'error', error: { type: 'not_found_error', message: 'model: claude-made-up-1' } });

async function send(gateway: Harness, key: string, model: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }) });
  await response.text();
  return logOf(gateway, response.headers.get('request-id'));
}

/** The traffic: two keys, a configured alias, accepted and refused glob names, an unreachable upstream, the simulator. */
async function traffic(gateway: Harness): Promise<{ lines: Record<string, unknown>[]; a: string; b: string }> {
  const a = await gateway.issueKey({ name: 'a' });
  const b = await gateway.issueKey({ name: 'b' });
  const lines: Record<string, unknown>[] = [];
  anthropicApi.reply(ok);
  for (const model of ['team-fast', 'team-fast', 'claude-sonnet-5']) lines.push(await send(gateway, a.key, model));
  anthropicApi.reply(notFound);
  lines.push(await send(gateway, b.key, 'claude-made-up-1'));
  for (const model of ['sim-made-up-2', 'sim-made-up-3', 'dead-made-up-4']) lines.push(await send(gateway, b.key, model));
  return { lines, a: a.id, b: b.id };
}

const byValue = (totals: ValueTotals[]) => new Map(totals.map((entry) => [entry.value, entry.totals]));
const sum = (lines: Record<string, unknown>[], pick: (line: Record<string, unknown>) => number) => lines.reduce((total, line) => total + pick(line), 0);
const cost = (line: Record<string, unknown>) => Math.round(((line.costUsd as number | undefined) ?? 0) * 1e6);
const tokens = (name: string) => (line: Record<string, unknown>) => ((line.usage as Record<string, number> | undefined)?.[name] ?? 0);

async function expectRollupsToShow(gateway: Harness, { lines, a, b }: Awaited<ReturnType<typeof traffic>>, from: Date, to: Date): Promise<void> {
  const keys = byValue(await gateway.rollups.totals('key', from, to, 'H'));
  const ofKey = (id: string) => lines.filter((line) => line.keyId === id);
  expect(keys.get(a)).toMatchObject({ requests: 3, errors: 0, costMicroUsd: sum(ofKey(a), cost), inputTokens: sum(ofKey(a), tokens('inputTokens')), outputTokens: sum(ofKey(a), tokens('outputTokens')) });
  expect(keys.get(b)).toMatchObject({ requests: 4, errors: 2, costMicroUsd: sum(ofKey(b), cost) });
  expect(sum(lines, cost)).toBeGreaterThan(0);

  // The model dimension: configured names and accepted ones, else the route's pattern; never a made-up name.
  const models = byValue(await gateway.rollups.totals('model', from, to, 'D'));
  expect(new Map([...models].map(([model, totals]) => [model, totals.requests]))).toEqual(new Map([['team-fast', 2], ['claude-sonnet-5', 1], ['claude-*', 1], ['sim-*', 2], ['dead-*', 1]]));
  const upstreams = byValue(await gateway.rollups.totals('upstream', from, to, 'M'));
  expect(new Map([...upstreams].map(([upstream, totals]) => [upstream, totals.requests]))).toEqual(new Map([['ant', 4], ['sim', 2], ['dead', 1]]));

  const [all] = await gateway.rollups.totals('all', from, to);
  expect(all?.totals).toMatchObject({ requests: 7, errors: 2, costMicroUsd: sum(lines, cost), cacheReadTokens: sum(lines, tokens('cacheReadTokens')) });
  // Every request that got a first byte is in the histogram.
  expect(all?.totals.ttfb.reduce((x, y) => x + y, 0)).toBe(lines.filter((line) => line.ttfbMs !== undefined).length);
  const series = await gateway.rollups.series('key', 'H', from, to, ['requests']);
  expect(series.values.find((entry) => entry.value === a)?.points.requests?.reduce((x, y) => x + y, 0)).toBe(3);
}

test('Lambda: each request writes an event; the aggregator folds them into rollups that show the traffic', async () => {
  const from = new Date();
  const sent = await traffic(lambda);
  const to = new Date();
  // Before the aggregator runs, nothing is rolled up: the console shows "as of" the last run.
  expect(await lambda.rollups.totals('all', from, to)).toEqual([]);
  const result = await aggregate(lambda.stats, { now: () => to.getTime() + 4 * 60_000, stopAt: Number.POSITIVE_INFINITY });
  expect(result.events).toBe(7);
  await expectRollupsToShow(lambda, sent, from, to);
});

test('npm start: the same traffic is in the rollups after a flush, with no event items', async () => {
  const from = new Date();
  const sent = await traffic(local);
  const to = new Date();
  expect(await local.rollups.totals('all', from, to)).toEqual([]);
  await local.recorder.flush();
  await expectRollupsToShow(local, sent, from, to);
  expect(await local.stats.minuteEvents(Math.floor(from.getTime() / 60_000))).toEqual([]);
});

test('a signed-in person and a key tied to them: both accounts charged exactly, the person and their groups in the rollups', async () => {
  const setup = await startSignInGateway();
  try {
    const { gateway } = setup;
    const tokens = await signIn(gateway.url, ALICE);
    const owned = await gateway.issueKey({ name: 'alice-ci', owner: ALICE.sub });
    const from = new Date();
    for (const bearer of [tokens.access_token as string, tokens.access_token as string, owned.key]) expect((await messagesWith(gateway.url, bearer)).status).toBe(200);
    for (const until = Date.now() + 5_000; gateway.server.inFlight > 0 && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 10));
    const to = new Date();

    // Caps read the accounts: the person's has all three requests, the key's its own one.
    const person = await gateway.recorder.days(personAccount(ALICE.sub), utcDay(from));
    expect(person.reduce((sum, day) => sum + day.requests, 0)).toBe(3);
    expect((await gateway.recorder.days(owned.id, utcDay(from))).reduce((sum, day) => sum + day.requests, 0)).toBe(1);

    await aggregate(gateway.stats, { now: () => to.getTime() + 4 * 60_000, stopAt: Number.POSITIVE_INFINITY });
    expect(byValue(await gateway.rollups.totals('person', from, to, 'H')).get(ALICE.sub)?.requests).toBe(3);
    expect(byValue(await gateway.rollups.totals('group', from, to, 'D')).get('engineering')?.requests).toBe(3);
    expect([...byValue(await gateway.rollups.totals('key', from, to, 'H'))].map(([id, totals]) => [id, totals.requests])).toEqual([[owned.id, 1]]);
  } finally {
    await setup.close();
  }
});
