/**
 * The stats table's schema: pre-aggregated usage for the console and for group pools, and (on
 * Lambda) the per-request usage events they are folded from. Partition key `pk`, sort key `sk`,
 * TTL on `expiresAt`. Layout and write paths: docs/console.md, "Usage rollups".
 */
export const STATS_TABLE = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttlAttribute: 'expiresAt',
} as const;

/** Rollup granularities: hour (partitioned by day), day (by month), month (by year). */
export const GRANULARITIES = ['H', 'D', 'M'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** What usage is grouped by. `all` has the single value `*`. */
export const DIMENSIONS = ['all', 'key', 'person', 'group', 'model', 'upstream'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** How long rollup rows are kept, in days, by granularity. */
export const ROLLUP_RETENTION_DAYS: Record<Granularity, number> = { H: 35, D: 400, M: 5 * 366 };

/**
 * Counters of a rollup row (atomic ADDs), plus the time-to-first-byte histogram `t00`…`t19`.
 * `fallbacks`: requests answered after another try failed (a fallback target, or another key).
 */
export const ROLLUP_COUNTERS = ['requests', 'errors', 'inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'costMicroUsd', 'fallbacks'] as const;
export type RollupCounter = (typeof ROLLUP_COUNTERS)[number];

/** Upper bounds (ms) of the time-to-first-byte histogram's buckets; the last is open-ended. */
export const TTFB_BOUNDS_MS = [25, 50, 75, 100, 150, 200, 300, 400, 500, 750, 1_000, 1_500, 2_000, 3_000, 5_000, 7_500, 10_000, 20_000, 60_000, Number.POSITIVE_INFINITY] as const;

/** Event partitions per minute on Lambda: spreads the per-request writes (no hot partition). */
export const EVENT_SHARDS = 16;

/** How long a usage event item is kept (days): time for the aggregator to catch up after an outage. */
export const EVENT_RETENTION_DAYS = 3;

/**
 * The aggregator folds a minute once it ended this many minutes ago: the slack for event writes
 * still under way (and for clocks) when the minute ended.
 */
export const SETTLE_MINUTES = 2;

/** The bucket of `at` for a granularity: `2026-11-26T14`, `2026-11-26`, `2026-11`. */
export function bucketOf(granularity: Granularity, at: Date): string {
  const iso = at.toISOString();
  return granularity === 'H' ? iso.slice(0, 13) : granularity === 'D' ? iso.slice(0, 10) : iso.slice(0, 7);
}

/** When the bucket holding `at` ends: the start of the next one. */
export function bucketEnd(granularity: Granularity, at: Date): Date {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  return new Date(granularity === 'H' ? Date.UTC(y, m, at.getUTCDate(), at.getUTCHours() + 1) : granularity === 'D' ? Date.UTC(y, m, at.getUTCDate() + 1) : Date.UTC(y, m + 1, 1));
}

/** The partition holding a bucket: a day of hours, a month of days, a year of months. */
export function periodOf(granularity: Granularity, bucket: string): string {
  return granularity === 'H' ? bucket.slice(0, 10) : granularity === 'D' ? bucket.slice(0, 7) : bucket.slice(0, 4);
}

export const statsKeys = {
  rollup: (granularity: Granularity, dimension: Dimension, period: string) => `R#${granularity}#${dimension}#${period}`,
  rollupSort: (bucket: string, value: string) => `${bucket}#${value}`,
  event: (epochMinute: number, shard: number) => `E#${epochMinute}#${shard}`,
  cursor: { pk: 'AGG', sk: 'cursor' },
} as const;
