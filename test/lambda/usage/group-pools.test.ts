import { poolSpend, PoolSpendCache } from '../../../lambda/usage/group-pools.ts';
import { DynamoStatsStore } from '../../../lambda/usage/stats-store.ts';
import type { UsageEvent } from '../../../lambda/usage/usage-event.ts';
import { UsageRecorder } from '../../../lambda/usage/usage-recorder.ts';
import { DynamoUsageStore } from '../../../lambda/usage/usage-store.ts';
import { counting, freshTables } from './usage-events.ts';

type Tables = Awaited<ReturnType<typeof freshTables>>;
let tables: Tables;
let batches: ReturnType<typeof counting>;

// Wednesday 2026-12-02: its week began on Monday 2026-11-30, in the previous month.
const NOW = new Date('2026-12-02T15:00:00Z');

const spend = (at: string, groups: string[], costMicroUsd: number, personSub = 'p'): UsageEvent => ({ requestId: `req_${Math.random()}`, at: new Date(at), personSub, groups, model: 'm', modelDimension: 'm', upstream: 'u', status: 200, costMicroUsd });

const EVENTS = [
  spend('2026-11-29T23:59:59Z', ['ml'], 1), // last week, last month
  spend('2026-11-30T00:00:00Z', ['ml', 'ops'], 10), // this week, last month
  spend('2026-12-01T09:00:00Z', ['ml'], 100), // this week and month
  spend('2026-12-02T00:00:00Z', ['ml'], 1_000), // today
  spend('2026-12-02T14:59:00Z', ['ml', 'ops'], 10_000, 'q'), // today
  spend('2026-11-03T10:00:00Z', ['ops'], 100_000), // last month
];

beforeAll(async () => {
  tables = await freshTables();
  batches = counting(tables.dynamo, 'BatchGetItem');
  const recorder = new UsageRecorder(new DynamoUsageStore(tables.usageTable, tables.dynamo), { flushMs: 3_600_000, stats: new DynamoStatsStore(tables.statsTable, tables.dynamo) });
  for (const event of EVENTS) await recorder.record(event);
  await recorder.close();
});
afterAll(async () => {
  await tables.close();
});

test("a group's spend today, this week (from Monday, across the month's end) and this month, in one read", async () => {
  batches.calls = 0;
  const spent = await poolSpend(tables.statsTable, batches.client, ['ml', 'ops', 'nobody'], NOW);
  expect(batches.calls).toBe(1);
  expect(spent).toEqual(
    new Map([
      ['ml', { day: 11_000, week: 11_110, month: 11_100 }],
      ['ops', { day: 10_000, week: 10_010, month: 10_000 }],
      ['nobody', { day: 0, week: 0, month: 0 }],
    ]),
  );
});

test('many groups: one BatchGetItem per 100 keys', async () => {
  const groups = Array.from({ length: 30 }, (_, i) => `g${i}`);
  batches.calls = 0;
  // Wednesday: 3 days of the week so far and the month row, 4 keys per group: 120 keys.
  const spent = await poolSpend(tables.statsTable, batches.client, [...groups, 'ml'], NOW);
  expect(batches.calls).toBe(2);
  expect(spent.get('ml')).toEqual({ day: 11_000, week: 11_110, month: 11_100 });
  expect(spent.size).toBe(31);
});

test('cached per instance for the interval; a new day is read again', async () => {
  const cache = new PoolSpendCache(tables.statsTable, batches.client, 30_000);
  batches.calls = 0;
  expect((await cache.spend(['ml'], NOW)).get('ml')?.day).toBe(11_000);
  expect((await cache.spend(['ml'], new Date(NOW.getTime() + 29_000))).get('ml')?.day).toBe(11_000);
  expect(batches.calls).toBe(1);
  // A group not yet cached is read alone.
  expect((await cache.spend(['ml', 'ops'], new Date(NOW.getTime() + 29_500))).get('ops')?.week).toBe(10_010);
  expect(batches.calls).toBe(2);
  await cache.spend(['ml'], new Date(NOW.getTime() + 31_000));
  expect(batches.calls).toBe(3);
  expect((await cache.spend(['ml'], new Date('2026-12-03T00:00:01Z'))).get('ml')).toEqual({ day: 0, week: 11_110, month: 11_100 });
  expect(batches.calls).toBe(4);
});
