import { jest } from '@jest/globals';
import { DynamoStatsStore } from '../../lambda/usage/stats-store.ts';
import { UsageRecorder } from '../../lambda/usage/usage-recorder.ts';
import { DynamoUsageStore } from '../../lambda/usage/usage-store.ts';
import type { AggregateResult } from '../../lambda/usage/aggregator.ts';
import { expectedRows, freshTables, randomEvents, scanRollups, sorted } from './usage/usage-events.ts';

/** The aggregator's Lambda entry as deployed: its environment, its own DynamoDB client, one run. */
test('one scheduled run folds the minutes that ended over 2 minutes ago and logs what it did', async () => {
  const tables = await freshTables();
  try {
    const now = Date.now();
    const events = randomEvents(51, 40, { at: () => new Date(now - 4 * 60_000 - Math.floor(Math.random() * 20 * 60_000)) });
    const recorder = new UsageRecorder(new DynamoUsageStore(tables.usageTable, tables.dynamo), { flushMs: 0, stats: new DynamoStatsStore(tables.statsTable, tables.dynamo) });
    await Promise.all(events.map((event) => recorder.record(event)));

    Object.assign(process.env, { GATEWAY_STATS_TABLE: tables.statsTable, AWS_ENDPOINT_URL_DYNAMODB: tables.store.endpoint });
    const { handler } = await import('../../lambda/aggregate.ts');
    const written: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => (written.push(String(chunk)), true));
    let result: AggregateResult;
    try {
      result = await handler({}, { getRemainingTimeInMillis: () => 90_000 });
    } finally {
      write.mockRestore();
    }
    expect(result).toMatchObject({ events: 40, behind: 0 });
    expect(JSON.parse(written.join(''))).toMatchObject({ level: 'info', msg: 'usage aggregated', events: 40, minutes: result.minutes });
    expect(sorted((await scanRollups(tables.dynamo, tables.statsTable)).rows)).toEqual(sorted(expectedRows(events)));
  } finally {
    delete process.env.GATEWAY_STATS_TABLE;
    delete process.env.AWS_ENDPOINT_URL_DYNAMODB;
    await tables.close();
  }
});
