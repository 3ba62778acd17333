import { startGateway, waitForLogs, type Harness } from '../../support/gateway-harness.ts';
import { adminCall, signInWithLink, type ConsoleSession } from '../../support/console.ts';
import { utcDay } from '../../../lambda/usage/usage-table.ts';
import type { DayUsage } from '../../../lambda/usage/usage-store.ts';

/**
 * The usage views against what the usage store holds: the overview, the explorer (JSON and
 * CSV) and the upstreams view read the rollups; the per-key day items are written by the same
 * requests, apart. Every number must agree exactly.
 */
const CONFIG = {
  upstreams: { sim: { type: 'simulator' }, dead: { type: 'anthropic', baseUrl: 'http://127.0.0.1:9' } },
  routes: [
    { model: 'sim-alpha', upstream: 'sim' },
    { model: 'sim-beta', upstream: 'sim' },
    // The primary cannot be reached: every request is answered by its fallback.
    { model: 'fb-*', upstream: 'dead', fallbacks: [{ upstream: 'sim' }], allowUnpriced: true },
  ],
};

interface Series {
  value: string;
  label: string | null;
  points: number[];
  total: number;
}

describe('console usage views', () => {
  let gateway: Harness;
  let session: ConsoleSession;
  let days: DayUsage[];
  const keys: Record<string, { id: string; key: string }> = {};
  beforeAll(async () => {
    gateway = await startGateway({ config: CONFIG, settings: { usageFlushMs: 60_000 } });
    session = await signInWithLink(gateway);
    keys.one = await gateway.issueKey({ name: 'one' });
    keys.two = await gateway.issueKey({ name: 'two' });
    const traffic: [string, string, number][] = [
      ['one', 'sim-alpha', 3],
      ['two', 'sim-beta', 2],
      ['one', 'fb-gamma', 2],
      ['two', 'sim-alpha', 1],
    ];
    let sent = 0;
    for (const [who, model, times] of traffic) {
      for (let i = 0; i < times; i++) {
        const response = await fetch(`${gateway.url}/first/v1/messages`, {
          method: 'POST',
          headers: { authorization: `Bearer ${keys[who]?.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model, max_tokens: 64, messages: [{ role: 'user', content: `request ${sent} ${'words '.repeat(sent)}` }] }),
        });
        expect(response.status).toBe(200);
        await response.text();
        sent++;
      }
    }
    await waitForLogs(gateway, sent);
    await gateway.recorder.flush();
    const today = utcDay(new Date());
    days = [...(await gateway.usage.days(keys.one?.id as string, today)), ...(await gateway.usage.days(keys.two?.id as string, today))];
  });
  afterAll(() => gateway.close());

  const call = async <T>(path: string) => {
    const answer = await adminCall(gateway.url, 'GET', path, { session });
    expect(answer.status).toBe(200);
    return answer.body as T;
  };
  const sum = (rows: DayUsage[], counter: 'requests' | 'costMicroUsd' | 'inputTokens' | 'outputTokens' | 'cacheReadTokens' | 'cacheWriteTokens') => rows.reduce((total, row) => total + row[counter], 0);
  const range = () => `from=${new Date(Date.now() - 3600_000).toISOString()}&to=${new Date().toISOString()}`;

  test('the explorer by key shows each key\'s cost and requests as the usage table holds them', async () => {
    expect(sum(days, 'requests')).toBe(8);
    for (const metric of ['cost', 'requests', 'inputTokens', 'outputTokens'] as const) {
      const explorer = await call<{ series: Series[]; granularity: string; other: unknown }>(`/usage?metric=${metric}&by=key&granularity=hour&${range()}`);
      expect(explorer.granularity).toBe('H');
      expect(explorer.other).toBeNull();
      const counter = metric === 'cost' ? 'costMicroUsd' : metric;
      for (const [name, { id }] of Object.entries(keys)) {
        const series = explorer.series.find((entry) => entry.value === id) as Series;
        expect([metric, name, series.total]).toEqual([metric, name, sum(days.filter((day) => day.keyId === id), counter)]);
        expect(series.label).toBe(name);
      }
    }
  });

  test('by model, and the token split of the total, agree with the usage table', async () => {
    const byModel = await call<{ series: Series[] }>(`/usage?metric=requests&by=model&granularity=day&${range()}`);
    const requestsOf = (model: string) => byModel.series.find((entry) => entry.value === model)?.total;
    // A name the config does not bound (the fb-* glob) is counted under the route's pattern.
    expect([requestsOf('sim-alpha'), requestsOf('sim-beta'), requestsOf('fb-*')]).toEqual([4, 2, 2]);
    const split = await call<{ series: Series[] }>(`/usage?metric=tokens&by=none&${range()}`);
    expect(Object.fromEntries(split.series.map((entry) => [entry.value, entry.total]))).toEqual({
      inputTokens: sum(days, 'inputTokens'),
      cacheReadTokens: sum(days, 'cacheReadTokens'),
      cacheWriteTokens: sum(days, 'cacheWriteTokens'),
      outputTokens: sum(days, 'outputTokens'),
    });
    expect(split.series.map((entry) => entry.label)).toEqual(['Input', 'Cache read', 'Cache write', 'Output']);
  });

  test('top 1 leaves the rest as "other", and the total is still everything', async () => {
    const explorer = await call<{ series: Series[]; other: { count: number; total: number }; total: { total: number } }>(`/usage?metric=cost&by=model&top=1&${range()}`);
    expect(explorer.series).toHaveLength(1);
    expect(explorer.other.count).toBe(2);
    expect(explorer.total.total).toBe(sum(days, 'costMicroUsd'));
  });

  test('the CSV holds the same table: a row per bucket, a column per series, dollars with their unit', async () => {
    const json = await call<{ series: Series[]; buckets: string[]; bucketStarts: number[]; total: { points: number[] } }>(`/usage?metric=cost&by=key&granularity=hour&${range()}`);
    const answer = await fetch(`${gateway.url}/admin/api/usage?metric=cost&by=key&granularity=hour&${range()}&format=csv`, { headers: { cookie: session.cookie } });
    expect(answer.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(answer.headers.get('content-disposition')).toMatch(/^attachment; filename="usage-cost-by-key-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv"$/);
    const rows = (await answer.text()).trim().split('\r\n').map((line) => line.split(','));
    expect(rows[0]).toEqual(['bucket_start_utc', ...json.series.map((entry) => `${entry.label} (USD)`), 'All requests (USD)']);
    expect(rows.slice(1).map((row) => row[0])).toEqual(json.bucketStarts.map((start) => new Date(start).toISOString()));
    const last = rows.at(-1) as string[];
    expect(Number(last.at(-1))).toBeCloseTo((json.total.points.at(-1) as number) / 1e6, 6);
    const column = json.series.findIndex((entry) => entry.value === keys.one?.id) + 1;
    expect(rows.slice(1).reduce((total, row) => total + Math.round(Number(row[column]) * 1e6), 0)).toBe(sum(days.filter((day) => day.keyId === keys.one?.id), 'costMicroUsd'));
  });

  test('the overview\'s today, week and month and its top keys and models agree too', async () => {
    const overview = await call<{ periods: Record<'day' | 'week' | 'month', { requests: number; costMicroUsd: number; errors: number; ttfbP50Ms: number | null; fallbacks: number }>; top: { key: { value: string; label: string; costMicroUsd: number }[]; model: { value: string }[] }; live: boolean }>('/overview?period=day');
    for (const period of ['day', 'week', 'month'] as const) expect(overview.periods[period]).toMatchObject({ requests: 8, costMicroUsd: sum(days, 'costMicroUsd'), errors: 0, fallbacks: 2 });
    expect(overview.periods.day.ttfbP50Ms).toEqual(expect.any(Number));
    expect(overview.live).toBe(true);
    const top = Object.fromEntries(overview.top.key.map((entry) => [entry.label, entry.costMicroUsd]));
    expect(top).toEqual({ one: sum(days.filter((day) => day.keyId === keys.one?.id), 'costMicroUsd'), two: sum(days.filter((day) => day.keyId === keys.two?.id), 'costMicroUsd') });
    expect(overview.top.model.map((entry) => entry.value).sort()).toEqual(['fb-*', 'sim-alpha', 'sim-beta']);
  });

  test('upstreams: every instance\'s requests and fallbacks from the rollups, and this instance\'s failed target', async () => {
    const view = await call<{ upstreams: { name: string; last24h: { requests: number; fallbacks: number } | null; instance: { targets: { model: string; failures: number }[] } }[] }>('/upstreams');
    const sim = view.upstreams.find((upstream) => upstream.name === 'sim');
    const dead = view.upstreams.find((upstream) => upstream.name === 'dead');
    expect(sim?.last24h).toMatchObject({ requests: 8, fallbacks: 2 });
    expect(dead?.last24h).toBeNull();
    expect(dead?.instance.targets).toEqual([expect.objectContaining({ model: 'fb-gamma', failures: 2 })]);
  });

  test('a range wider than a granularity keeps is refused with the reason, before any read', async () => {
    const answer = await adminCall(gateway.url, 'GET', `/usage?granularity=hour&from=2026-01-01&to=2026-11-01`, { session });
    expect(answer.status).toBe(400);
    expect((answer.body as { error: { message: string } }).error.message).toMatch(/at most 36 partitions/);
  });
});
