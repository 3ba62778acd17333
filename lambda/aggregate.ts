import { bareDynamo } from './aws/dynamodb.ts';
import { aggregate } from './usage/aggregator.ts';
import { DynamoStatsStore } from './usage/stats-store.ts';

/**
 * The usage aggregator's Lambda entry, its own small bundle: EventBridge runs it every minute,
 * one at a time (reserved concurrency 1; lib/constructs/usage-aggregator.ts). It folds the usage
 * events of each whole minute into the rollups (lambda/usage/aggregator.ts).
 * - GATEWAY_STATS_TABLE: the stats table (required)
 */
const table = process.env.GATEWAY_STATS_TABLE;
if (!table) throw new Error('GATEWAY_STATS_TABLE is not set');
const store = new DynamoStatsStore(table, bareDynamo({ region: process.env.AWS_REGION ?? 'us-east-1' }));

/** A run starts no minute after this long, so that it has ended before the next scheduled one. */
const RUN_BUDGET_MS = 45_000;
/** Nor this close to the function's timeout (a minute's reads and writes take well under it). */
const TIMEOUT_MARGIN_MS = 20_000;

export async function handler(_event: unknown, context: { getRemainingTimeInMillis(): number }) {
  const started = Date.now();
  const stopAt = Math.min(started + RUN_BUDGET_MS, started + context.getRemainingTimeInMillis() - TIMEOUT_MARGIN_MS);
  const result = await aggregate(store, { stopAt });
  process.stdout.write(`${JSON.stringify({ level: result.behind > 0 ? 'warn' : 'info', msg: 'usage aggregated', ...result, ms: Date.now() - started })}\n`);
  return result;
}
