import { aggregate } from '../../../lambda/usage/aggregator.ts';
import { bucketsBetween, granularityFor, partitionsBetween, Rollups, ttfbPercentile } from '../../../lambda/usage/rollups.ts';
import { DynamoStatsStore } from '../../../lambda/usage/stats-store.ts';
import { TTFB_BOUNDS_MS, type Dimension } from '../../../lambda/usage/stats-table.ts';
import type { UsageEvent } from '../../../lambda/usage/usage-event.ts';
import { UsageRecorder } from '../../../lambda/usage/usage-recorder.ts';
import { DynamoUsageStore } from '../../../lambda/usage/usage-store.ts';
import { counting, freshTables, randomEvents } from './usage-events.ts';

type Tables = Awaited<ReturnType<typeof freshTables>>;
let tables: Tables;
/** The store's client, counting the Queries the readers make. */
let queries: ReturnType<typeof counting>;

// Events over 2026-11-26 14:00 to 17:00 UTC and around three month ends (randomEvents' bases).
const events = randomEvents(41, 600);

beforeAll(async () => {
  tables = await freshTables();
  queries = counting(tables.dynamo, 'Query');
  const recorder = new UsageRecorder(new DynamoUsageStore(tables.usageTable, tables.dynamo), { flushMs: 3_600_000, stats: new DynamoStatsStore(tables.statsTable, tables.dynamo) });
  for (const event of events) await recorder.record(event);
  await recorder.close();
});
afterAll(async () => {
  await tables.close();
});

const valuesOf = (event: UsageEvent, dimension: Dimension): string[] =>
  dimension === 'all' ? ['*'] : dimension === 'key' ? [event.keyId ?? ''].filter(Boolean) : dimension === 'person' ? [event.personSub ?? ''].filter(Boolean) : dimension === 'group' ? [...new Set(event.groups)] : dimension === 'model' ? [event.modelDimension] : [event.upstream];

/** Sum of a metric per value over events whose bucket is in `buckets`, computed from the events. */
function naive(dimension: Dimension, bucketOfEvent: (event: UsageEvent) => string, buckets: string[], metric: (event: UsageEvent) => number): Map<string, Map<string, number>> {
  const result = new Map<string, Map<string, number>>();
  for (const event of events) {
    const bucket = bucketOfEvent(event);
    if (!buckets.includes(bucket)) continue;
    for (const value of valuesOf(event, dimension)) {
      const perBucket = result.get(value) ?? new Map<string, number>();
      perBucket.set(bucket, (perBucket.get(bucket) ?? 0) + metric(event));
      result.set(value, perBucket);
    }
  }
  return result;
}

const cost = (event: UsageEvent) => event.costMicroUsd;
const errors = (event: UsageEvent) => ((event.status ?? 500) >= 400 || (event.outcome !== undefined && event.outcome !== 'ok') ? 1 : 0);
const hourOf = (event: UsageEvent) => event.at.toISOString().slice(0, 13);
const dayOf = (event: UsageEvent) => event.at.toISOString().slice(0, 10);

describe('reading the rollups: the answers equal what was recorded', () => {
  test('series by the hour, per person: cost and errors in every bucket, empty ones zero', async () => {
    const rollups = new Rollups(tables.statsTable, queries.client);
    const from = new Date('2026-11-26T13:20:00Z');
    const to = new Date('2026-11-26T18:59:00Z');
    queries.calls = 0;
    const series = await rollups.series('person', 'auto', from, to, ['costMicroUsd', 'errors']);
    expect(queries.calls).toBe(1);
    expect(series.granularity).toBe('H');
    expect(series.buckets).toEqual(['2026-11-26T13', '2026-11-26T14', '2026-11-26T15', '2026-11-26T16', '2026-11-26T17', '2026-11-26T18']);
    const expectedCost = naive('person', hourOf, series.buckets, cost);
    const expectedErrors = naive('person', hourOf, series.buckets, errors);
    expect(series.values.map((entry) => entry.value).sort()).toEqual([...expectedCost.keys()].sort());
    for (const entry of series.values) {
      expect(entry.points.costMicroUsd).toEqual(series.buckets.map((bucket) => expectedCost.get(entry.value)?.get(bucket) ?? 0));
      expect(entry.points.errors).toEqual(series.buckets.map((bucket) => expectedErrors.get(entry.value)?.get(bucket) ?? 0));
    }
    expect(series.values.some((entry) => (entry.points.costMicroUsd ?? []).some((point) => point > 0))).toBe(true);
  });

  test('totals by the day across a month\'s end, per group, and the top keys by spend', async () => {
    const rollups = new Rollups(tables.statsTable, queries.client);
    const from = new Date('2026-11-29T00:00:00Z');
    const to = new Date('2026-12-01T12:00:00Z');
    queries.calls = 0;
    const totals = await rollups.totals('group', from, to, 'D');
    // Two month partitions: November's days and December's.
    expect(queries.calls).toBe(2);
    const days = ['2026-11-29', '2026-11-30', '2026-12-01'];
    const expected = naive('group', dayOf, days, cost);
    const requests = naive('group', dayOf, days, () => 1);
    expect(new Map(totals.map((entry) => [entry.value, entry.totals.costMicroUsd]))).toEqual(new Map([...expected].map(([value, perDay]) => [value, [...perDay.values()].reduce((a, b) => a + b, 0)])));
    expect(new Map(totals.map((entry) => [entry.value, entry.totals.requests]))).toEqual(new Map([...requests].map(([value, perDay]) => [value, [...perDay.values()].reduce((a, b) => a + b, 0)])));
    expect(totals.map((entry) => entry.value)).toContain('a#b');

    const monthOf = (event: UsageEvent) => event.at.toISOString().slice(0, 7);
    const spend = [...naive('key', monthOf, ['2026-11', '2026-12', '2027-01', '2026-02', '2026-03'], cost)].map(([value, perMonth]) => ({ value, cost: [...perMonth.values()].reduce((a, b) => a + b, 0) }));
    const top = await rollups.top('key', 'costMicroUsd', 2, new Date('2026-02-01T00:00:00Z'), new Date('2027-01-31T00:00:00Z'));
    expect(top.map((entry) => ({ value: entry.value, cost: entry.totals.costMicroUsd }))).toEqual(spend.sort((a, b) => b.cost - a.cost).slice(0, 2));
  });

  test('time to first byte: p50 and p99 fall in the buckets holding the true percentiles', async () => {
    const rollups = new Rollups(tables.statsTable, queries.client);
    const [all] = await rollups.ttfb('all', new Date('2026-01-01T00:00:00Z'), new Date('2027-12-31T00:00:00Z'), 'M');
    const times = events.flatMap((event) => (event.ttfbMs === undefined ? [] : [event.ttfbMs])).sort((a, b) => a - b);
    expect(all?.count).toBe(times.length);
    const bucketBounds = (ms: number) => {
      const index = TTFB_BOUNDS_MS.findIndex((bound) => ms <= bound);
      return [index === 0 ? 0 : (TTFB_BOUNDS_MS[index - 1] as number), TTFB_BOUNDS_MS[index] as number];
    };
    for (const [fraction, estimate] of [[0.5, all?.p50], [0.99, all?.p99]] as const) {
      const truth = times[Math.ceil(fraction * times.length) - 1] as number;
      const [low, high] = bucketBounds(truth);
      expect(estimate).toBeGreaterThanOrEqual(low as number);
      expect(estimate).toBeLessThanOrEqual(Math.min(high as number, TTFB_BOUNDS_MS.at(-2) as number));
    }
  });

  test('the two write paths give the same answers: the same events through events and the aggregator', async () => {
    const lambdaTables = await freshTables();
    try {
      // The same events, moved to recent minutes so the aggregator's first run covers them.
      const now = Date.parse('2026-11-26T17:05:00Z');
      const recent = events.filter((event) => hourOf(event) === '2026-11-26T16');
      expect(recent.length).toBeGreaterThan(10);
      const stats = new DynamoStatsStore(lambdaTables.statsTable, lambdaTables.dynamo);
      const recorder = new UsageRecorder(new DynamoUsageStore(lambdaTables.usageTable, lambdaTables.dynamo), { flushMs: 0, stats });
      await Promise.all(recent.map((event) => recorder.record(event)));
      const viaLambda = new Rollups(lambdaTables.statsTable, lambdaTables.dynamo);
      expect(await viaLambda.asOf()).toBeUndefined();
      await aggregate(stats, { now: () => now, stopAt: Number.POSITIVE_INFINITY, firstRunMinutes: 120 });
      expect(await viaLambda.asOf()).toEqual(new Date(now - 120_000));
      const range = [new Date('2026-11-26T16:00:00Z'), new Date('2026-11-26T16:59:00Z')] as const;
      const viaNpmStart = new Rollups(tables.statsTable, tables.dynamo);
      for (const dimension of ['all', 'key', 'person', 'group', 'model', 'upstream'] as const) {
        const a = await viaLambda.series(dimension, 'H', ...range, ['requests', 'costMicroUsd', 'inputTokens', 'errors', 'ttfbP99']);
        const b = await viaNpmStart.series(dimension, 'H', ...range, ['requests', 'costMicroUsd', 'inputTokens', 'errors', 'ttfbP99']);
        const byValue = (series: typeof a) => new Map(series.values.map((entry) => [entry.value, entry.points]));
        expect(byValue(a)).toEqual(byValue(b));
      }
      expect(await viaNpmStart.asOf()).toBeUndefined();
    } finally {
      await lambdaTables.close();
    }
  });
});

describe('ranges, granularities and the partitions a read covers', () => {
  const at = (iso: string) => new Date(iso);

  test("'auto': hours up to 2 days, days up to 92 days, months beyond", () => {
    const from = at('2026-11-01T00:00:00Z');
    expect(granularityFor(from, new Date(from.getTime() + 2 * 86_400_000))).toBe('H');
    expect(granularityFor(from, new Date(from.getTime() + 2 * 86_400_000 + 1))).toBe('D');
    expect(granularityFor(from, new Date(from.getTime() + 92 * 86_400_000))).toBe('D');
    expect(granularityFor(from, new Date(from.getTime() + 93 * 86_400_000))).toBe('M');
  });

  test('the partitions of the widest auto ranges: at most 3 days, 4 months, and a year per year', () => {
    expect(partitionsBetween('H', at('2026-11-26T23:30:00Z'), at('2026-11-28T23:30:00Z'))).toEqual(['2026-11-26', '2026-11-27', '2026-11-28']);
    expect(partitionsBetween('D', at('2026-10-31T12:00:00Z'), at('2027-01-31T12:00:00Z'))).toEqual(['2026-10', '2026-11', '2026-12', '2027-01']);
    expect(partitionsBetween('M', at('2024-12-31T00:00:00Z'), at('2027-01-01T00:00:00Z'))).toEqual(['2024', '2025', '2026', '2027']);
    expect(bucketsBetween('M', at('2026-11-30T00:00:00Z'), at('2027-02-01T00:00:00Z'))).toEqual(['2026-11', '2026-12', '2027-01', '2027-02']);
    expect(bucketsBetween('D', at('2026-02-27T05:00:00Z'), at('2026-03-01T00:00:00Z'))).toEqual(['2026-02-27', '2026-02-28', '2026-03-01']);
  });

  test('a range wider than a granularity keeps is refused before any read', async () => {
    expect(() => partitionsBetween('H', at('2026-01-01T00:00:00Z'), at('2026-11-26T00:00:00Z'))).toThrow(RangeError);
    expect(() => partitionsBetween('D', at('2026-11-02T00:00:00Z'), at('2026-11-01T00:00:00Z'))).toThrow('ends before it starts');
    queries.calls = 0;
    await expect(new Rollups(tables.statsTable, queries.client).series('all', 'H', at('2000-01-01T00:00:00Z'), at('2026-11-26T00:00:00Z'), ['requests'])).rejects.toThrow(RangeError);
    expect(queries.calls).toBe(0);
  });

  test('percentiles interpolate within a bucket; the open last bucket answers its lower bound; none without data', () => {
    const histogram = TTFB_BOUNDS_MS.map(() => 0);
    expect(ttfbPercentile(histogram, 0.5)).toBeUndefined();
    histogram[1] = 10; // 25 < t <= 50
    expect(ttfbPercentile(histogram, 0.5)).toBe(37.5);
    expect(ttfbPercentile(histogram, 1)).toBe(50);
    histogram[TTFB_BOUNDS_MS.length - 1] = 10;
    expect(ttfbPercentile(histogram, 0.99)).toBe(60_000);
  });
});
