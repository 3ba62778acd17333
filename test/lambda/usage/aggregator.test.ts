import type { DynamoApi } from '../../../lambda/aws/dynamodb.ts';
import { aggregate } from '../../../lambda/usage/aggregator.ts';
import { DynamoStatsStore, epochMinute, shardOf } from '../../../lambda/usage/stats-store.ts';
import { EVENT_RETENTION_DAYS } from '../../../lambda/usage/stats-table.ts';
import { UsageRecorder } from '../../../lambda/usage/usage-recorder.ts';
import { DynamoUsageStore } from '../../../lambda/usage/usage-store.ts';
import type { UsageEvent } from '../../../lambda/usage/usage-event.ts';
import { seededRandom } from '../../support/chunking.ts';
import { expectedRows, freshTables, randomEvents, scanAll, scanRollups, sorted } from './usage-events.ts';

type Tables = Awaited<ReturnType<typeof freshTables>>;
let tables: Tables;

beforeEach(async () => {
  tables = await freshTables();
});
afterEach(async () => {
  await tables.close();
});


/** The clock the aggregator runs at: some minutes after the events. */
const NOW = Date.parse('2026-11-26T15:00:30Z');

/** Events spread over the 40 minutes before NOW - 3 min (all foldable), a few in each minute. */
function recentEvents(seed: number, count: number): UsageEvent[] {
  const next = seededRandom(seed);
  return randomEvents(seed, count, { at: () => new Date(NOW - 3 * 60_000 - Math.floor(next() * 40 * 60_000)) });
}

async function writeEvents(events: UsageEvent[]): Promise<DynamoStatsStore> {
  const stats = new DynamoStatsStore(tables.statsTable, tables.dynamo);
  const recorder = new UsageRecorder(new DynamoUsageStore(tables.usageTable, tables.dynamo), { flushMs: 0, stats });
  await Promise.all(events.map((event) => recorder.record(event)));
  return stats;
}

const run = (stats: Pick<DynamoStatsStore, 'cursor' | 'readMinute' | 'applyRollup' | 'advanceCursor'>, now = NOW) => aggregate(stats, { now: () => now, stopAt: Number.POSITIVE_INFINITY, writeConcurrency: 4 });

/** A client that dies (throws, as a crashed process stops) after `writes` rollup writes have succeeded. */
function dyingAfter(client: DynamoApi, writes: number): DynamoApi {
  let done = 0;
  return {
    call: (async (operation: string, input: { Key?: { pk?: { S?: string } } }) => {
      const rollupWrite = operation === 'UpdateItem' && input.Key?.pk?.S?.startsWith('R#');
      if (rollupWrite && done >= writes) throw new Error('the aggregator died here');
      const result = await client.call(operation as 'UpdateItem', input as never);
      if (rollupWrite) done++;
      return result;
    }) as DynamoApi['call'],
  };
}

describe('Lambda: usage events folded by the aggregator', () => {
  test('the rollups equal the sum of the events; the cursor stops 3 minutes back, and a second run adds nothing', async () => {
    const events = recentEvents(21, 250);
    const stats = await writeEvents(events);
    const first = await run(stats);
    expect(first).toMatchObject({ events: 250, rowsSkipped: 0, behind: 0, cursor: epochMinute(NOW) - 3 });
    expect(sorted((await scanRollups(tables.dynamo, tables.statsTable)).rows)).toEqual(sorted(expectedRows(events)));
    const again = await run(stats);
    expect(again).toMatchObject({ minutes: 0, events: 0 });
    expect(sorted((await scanRollups(tables.dynamo, tables.statsTable)).rows)).toEqual(sorted(expectedRows(events)));
  });

  test('a minute not yet 2 minutes old is left for a later run, then folded', async () => {
    const settled = recentEvents(22, 20);
    const fresh = randomEvents(23, 10, { at: () => new Date(NOW - 90_000) });
    const stats = await writeEvents([...settled, ...fresh]);
    await run(stats);
    expect(sorted((await scanRollups(tables.dynamo, tables.statsTable)).rows)).toEqual(sorted(expectedRows(settled)));
    await run(stats, NOW + 2 * 60_000);
    expect(sorted((await scanRollups(tables.dynamo, tables.statsTable)).rows)).toEqual(sorted(expectedRows([...settled, ...fresh])));
  });

  test('a minute with events in several of its 16 partitions is read whole', async () => {
    const minute = NOW - 10 * 60_000;
    const events = randomEvents(24, 120, { at: () => new Date(minute) });
    const shards = new Set(events.map((event) => shardOf(event.requestId)));
    expect(shards.size).toBeGreaterThan(10);
    const stats = await writeEvents(events);
    const partitions = new Set((await scanAll(tables.dynamo, tables.statsTable)).map((item) => item.pk?.S));
    expect(partitions.size).toBe(shards.size);
    expect((await stats.minuteEvents(epochMinute(minute))).length).toBe(120);
    await run(stats);
    const { rows } = await scanRollups(tables.dynamo, tables.statsTable);
    const hour = new Date(minute).toISOString().slice(0, 13);
    expect(rows.get(`R#H#all#${hour.slice(0, 10)}|${hour}#*`)?.requests).toBe(120);
    expect(sorted(rows)).toEqual(sorted(expectedRows(events)));
  });

  test('two overlapping runs count every minute once', async () => {
    const events = recentEvents(25, 300);
    const stats = await writeEvents(events);
    const results = await Promise.all([run(stats), run(new DynamoStatsStore(tables.statsTable, tables.dynamo))]);
    // Both went through the minutes; between them every row was written once.
    expect(results.map((result) => result.events)).toEqual([300, 300]);
    expect(results[0].rowsWritten + results[1].rowsWritten).toBe(results[0].rowsWritten + results[0].rowsSkipped);
    expect(results[1].rowsSkipped + results[0].rowsSkipped).toBeGreaterThan(0);
    expect(sorted((await scanRollups(tables.dynamo, tables.statsTable)).rows)).toEqual(sorted(expectedRows(events)));
  });

  test('a run that dies half way loses nothing and counts nothing twice: the next run redoes its minute', async () => {
    const events = recentEvents(26, 200);
    const stats = await writeEvents(events);
    const dying = new DynamoStatsStore(tables.statsTable, dyingAfter(tables.dynamo, 137));
    await expect(run(dying)).rejects.toThrow('the aggregator died here');
    const partial = (await scanRollups(tables.dynamo, tables.statsTable)).rows;
    expect(partial.size).toBeGreaterThan(0);
    expect(sorted(partial)).not.toEqual(sorted(expectedRows(events)));
    const resumed = await run(stats);
    expect(resumed.rowsSkipped).toBeGreaterThan(0);
    expect(sorted((await scanRollups(tables.dynamo, tables.statsTable)).rows)).toEqual(sorted(expectedRows(events)));
  });

  test('the first run starts an hour back; a run out of time leaves the rest for the next, in order', async () => {
    const old = randomEvents(27, 5, { at: () => new Date(NOW - 3 * 3600_000) });
    const events = recentEvents(28, 60);
    const stats = await writeEvents([...old, ...events]);
    let clock = NOW;
    // Each minute takes 20 s of the run's 60 s budget.
    const slow = { cursor: () => stats.cursor(), applyRollup: stats.applyRollup.bind(stats), advanceCursor: stats.advanceCursor.bind(stats), readMinute: (minute: number, visit: Parameters<DynamoStatsStore['readMinute']>[1]) => ((clock += 20_000), stats.readMinute(minute, visit)) };
    const partial = await aggregate(slow, { now: () => clock, stopAt: NOW + 60_000 });
    expect(partial.minutes).toBe(3);
    expect(partial.cursor).toBe(epochMinute(NOW) - 3 - 60 + 3);
    expect(partial.behind).toBeGreaterThan(0);
    await run(stats, clock);
    // The events three hours old were before the first run's hour: never folded.
    expect(sorted((await scanRollups(tables.dynamo, tables.statsTable)).rows)).toEqual(sorted(expectedRows(events)));
  });

  test('retention: event items expire after 3 days, rollup rows per their granularity', async () => {
    const at = new Date(NOW - 5 * 60_000);
    const stats = await writeEvents(randomEvents(29, 3, { at: () => at }));
    const eventItems = (await scanAll(tables.dynamo, tables.statsTable)).filter((item) => item.pk?.S?.startsWith('E#'));
    expect(eventItems.map((item) => Number(item.expiresAt?.N))).toEqual(eventItems.map(() => Math.floor(at.getTime() / 1000) + EVENT_RETENTION_DAYS * 86_400));
    await run(stats);
    const { items } = await scanRollups(tables.dynamo, tables.statsTable);
    const expiry = (granularity: string) => new Set(items.filter((item) => item.pk?.S?.startsWith(`R#${granularity}#`)).map((item) => Number(item.expiresAt?.N)));
    expect(expiry('H')).toEqual(new Set([Date.parse('2026-11-26T15:00:00Z') / 1000 + 35 * 86_400]));
    expect(expiry('D')).toEqual(new Set([Date.parse('2026-11-27T00:00:00Z') / 1000 + 400 * 86_400]));
    expect(expiry('M')).toEqual(new Set([Date.parse('2026-12-01T00:00:00Z') / 1000 + 5 * 366 * 86_400]));
    expect(items.find((item) => item.pk?.S === 'AGG')?.lastMinute?.N).toBe(String(epochMinute(NOW) - 3));
  });
});
