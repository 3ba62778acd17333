import { ensureStatsTable } from '../../../bin/local/embedded-store.ts';
import { DynamoStatsStore } from '../../../lambda/usage/stats-store.ts';
import { UsageRecorder } from '../../../lambda/usage/usage-recorder.ts';
import { DynamoUsageStore } from '../../../lambda/usage/usage-store.ts';
import { personAccount } from '../../../lambda/usage/usage-table.ts';
import type { UsageEvent } from '../../../lambda/usage/usage-event.ts';
import { expectedRows, freshTables, randomEvents, scanAll, scanRollups, sorted } from './usage-events.ts';

type Tables = Awaited<ReturnType<typeof freshTables>>;
let tables: Tables;

beforeEach(async () => {
  tables = await freshTables();
});
afterEach(async () => {
  await tables.close();
});


/** What the accounts' day items must hold: per account, day and client model. */
function expectedDays(events: UsageEvent[]): Map<string, { requests: number; inputTokens: number; costMicroUsd: number }> {
  const days = new Map<string, { requests: number; inputTokens: number; costMicroUsd: number }>();
  for (const event of events) {
    const accounts = [event.keyId, event.personSub === undefined ? undefined : `person#${event.personSub}`].filter((account) => account !== undefined);
    for (const account of accounts) {
      const key = `${account}|DAY#${event.at.toISOString().slice(0, 10)}#${event.model}`;
      const day = days.get(key) ?? { requests: 0, inputTokens: 0, costMicroUsd: 0 };
      day.requests += 1;
      day.inputTokens += event.usage?.inputTokens ?? 0;
      day.costMicroUsd += event.costMicroUsd;
      days.set(key, day);
    }
  }
  return days;
}

async function storedDays(): Promise<Map<string, { requests: number; inputTokens: number; costMicroUsd: number }>> {
  const items = await scanAll(tables.dynamo, tables.usageTable);
  return new Map(items.map((item) => [`${item.keyId?.S}|${item.period?.S}`, { requests: Number(item.requests?.N ?? 0), inputTokens: Number(item.inputTokens?.N ?? 0), costMicroUsd: Number(item.costMicroUsd?.N ?? 0) }]));
}

describe('npm start (flushMs > 0): accounts and rollups added up in memory, written at each flush', () => {
  test('after a flush the rollup rows and the accounts\' day items are exactly the sum of the events', async () => {
    const stats = new DynamoStatsStore(tables.statsTable, tables.dynamo);
    const recorder = new UsageRecorder(new DynamoUsageStore(tables.usageTable, tables.dynamo), { flushMs: 3_600_000, stats });
    const events = randomEvents(11, 300);
    for (const event of events.slice(0, 150)) await recorder.record(event);
    await recorder.flush();
    for (const event of events.slice(150)) await recorder.record(event);
    expect(recorder.pendingItems).toBeGreaterThan(0);
    // Nothing of the second half is in the table yet: one write per row per flush, not per request.
    expect(sorted((await scanRollups(tables.dynamo, tables.statsTable)).rows)).toEqual(sorted(expectedRows(events.slice(0, 150))));
    await recorder.close();
    expect(recorder.pendingItems).toBe(0);
    expect(sorted((await scanRollups(tables.dynamo, tables.statsTable)).rows)).toEqual(sorted(expectedRows(events)));
    expect(sorted(await storedDays())).toEqual(sorted(expectedDays(events)));
    // npm start writes no event items: the rows are its only stats writes.
    expect((await scanAll(tables.dynamo, tables.statsTable)).filter((item) => item.pk?.S?.startsWith('E#'))).toEqual([]);
  });

  test('a person\'s day items are read back with what is not written yet, under person#<sub>', async () => {
    const recorder = new UsageRecorder(new DynamoUsageStore(tables.usageTable, tables.dynamo), { flushMs: 3_600_000 });
    const at = new Date('2026-11-26T10:00:00Z');
    const event: UsageEvent = { requestId: 'req_1', at, keyId: 'key_1', personSub: 'alice', groups: ['ml'], model: 'claude-sonnet-5', modelDimension: 'claude-sonnet-5', upstream: 'ant', status: 200, costMicroUsd: 700, usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 } };
    await recorder.record(event);
    await recorder.record({ ...event, requestId: 'req_2', keyId: undefined });
    expect(await recorder.days(personAccount('alice'), '2026-11-01')).toEqual([expect.objectContaining({ keyId: 'person#alice', day: '2026-11-26', requests: 2, costMicroUsd: 1400, inputTokens: 20 })]);
    expect(await recorder.days('key_1', '2026-11-01')).toEqual([expect.objectContaining({ requests: 1, costMicroUsd: 700 })]);
    await recorder.close();
    expect(await recorder.days(personAccount('alice'), '2026-11-01')).toEqual([expect.objectContaining({ requests: 2, costMicroUsd: 1400 })]);
  });

  test('rollup rows whose write failed are kept and written by a later flush, once', async () => {
    const stats = new DynamoStatsStore('stats-not-created-yet', tables.dynamo);
    const failures: number[] = [];
    const recorder = new UsageRecorder(new DynamoUsageStore(tables.usageTable, tables.dynamo), { flushMs: 3_600_000, stats, onWriteError: (_error, items) => failures.push(items) });
    const events = randomEvents(12, 40);
    for (const event of events) await recorder.record(event);
    await recorder.flush();
    expect(failures).toHaveLength(1);
    expect(recorder.pendingItems).toBe(failures[0]);
    await ensureStatsTable(tables.dynamo, 'stats-not-created-yet');
    await recorder.close();
    expect(sorted((await scanRollups(tables.dynamo, 'stats-not-created-yet')).rows)).toEqual(sorted(expectedRows(events)));
    expect(sorted(await storedDays())).toEqual(sorted(expectedDays(events)));
  });

  test('a flush asked for while another is under way writes what was recorded since that one began', async () => {
    const stats = new DynamoStatsStore(tables.statsTable, tables.dynamo);
    const recorder = new UsageRecorder(new DynamoUsageStore(tables.usageTable, tables.dynamo), { flushMs: 3_600_000, stats });
    const events = randomEvents(15, 40);
    for (const event of events.slice(0, 20)) await recorder.record(event);
    const first = recorder.flush();
    for (const event of events.slice(20)) await recorder.record(event);
    await recorder.flush();
    await first;
    expect(recorder.pendingItems).toBe(0);
    expect(sorted((await scanRollups(tables.dynamo, tables.statsTable)).rows)).toEqual(sorted(expectedRows(events)));
    expect(sorted(await storedDays())).toEqual(sorted(expectedDays(events)));
  });

  test('backpressure: at most maxPendingRows rows are held; record waits for a flush beyond', async () => {
    const stats = new DynamoStatsStore(tables.statsTable, tables.dynamo);
    const recorder = new UsageRecorder(new DynamoUsageStore(tables.usageTable, tables.dynamo), { flushMs: 3_600_000, stats, maxPendingRows: 30 });
    const events = randomEvents(13, 60);
    let most = 0;
    for (const event of events) {
      await recorder.record(event);
      most = Math.max(most, recorder.pendingItems);
    }
    // One event adds at most 3 x 8 rows and a few day items on top of what was held.
    expect(most).toBeLessThan(30 + 3 * 8 + 2 + 5);
    await recorder.close();
    expect(sorted((await scanRollups(tables.dynamo, tables.statsTable)).rows)).toEqual(sorted(expectedRows(events)));
  });
});

describe('Lambda (flushMs 0): each request\'s writes are done when record resolves', () => {
  test('one UpdateItem per account and one event item; no rollup row until the aggregator runs', async () => {
    const stats = new DynamoStatsStore(tables.statsTable, tables.dynamo);
    const recorder = new UsageRecorder(new DynamoUsageStore(tables.usageTable, tables.dynamo), { flushMs: 0, stats });
    const events = randomEvents(14, 50);
    await Promise.all(events.map((event) => recorder.record(event)));
    expect(recorder.pendingItems).toBe(0);
    expect(sorted(await storedDays())).toEqual(sorted(expectedDays(events)));
    const items = await scanAll(tables.dynamo, tables.statsTable);
    expect(items.filter((item) => item.pk?.S?.startsWith('R#'))).toEqual([]);
    const eventItems = items.filter((item) => item.pk?.S?.startsWith('E#'));
    expect(eventItems.map((item) => item.sk?.S).sort()).toEqual(events.map((event) => event.requestId).sort());
    // A retried write of the same request lands on the same item.
    await recorder.record(events[0] as UsageEvent);
    expect((await scanAll(tables.dynamo, tables.statsTable)).filter((item) => item.pk?.S?.startsWith('E#'))).toHaveLength(events.length);
  });
});
