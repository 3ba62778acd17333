import { GRANULARITIES, ROLLUP_RETENTION_DAYS, statsKeys, TTFB_BOUNDS_MS, bucketEnd, bucketOf, periodOf, type Dimension } from './stats-table.ts';
import type { UsageEvent } from './usage-event.ts';

/**
 * The one fold from usage events to rollup rows, pure. Both write paths use it: npm start's
 * UsageRecorder adds requests up by hour and dimension values (rollup-tally.ts), folds the sums
 * at each flush and ADDs the rows; on Lambda the aggregator folds each whole minute of event
 * items and writes the rows under a watermark (docs/console.md, "Usage rollups").
 */

/** What the rollups need of a usage event (on Lambda, the event item holds exactly this). */
export type RollupSource = Pick<UsageEvent, 'at' | 'keyId' | 'personSub' | 'groups' | 'modelDimension' | 'upstream' | 'status' | 'outcome' | 'ttfbMs' | 'usage' | 'costMicroUsd' | 'fallback'>;

/** Counters added to one row, by attribute name: ROLLUP_COUNTERS and the histogram's `t00`…`t19`. Absent = 0. */
export type RollupCounters = Record<string, number>;

/** What a fold adds to one rollup row. */
export interface RollupIncrement {
  pk: string;
  sk: string;
  /** The row's TTL (epoch seconds): the end of its bucket plus its granularity's retention. */
  expiresAt: number;
  counters: RollupCounters;
}

/** The histogram counter of bucket `index`: `t00`…`t19`. */
export function histogramCounter(index: number): string {
  return `t${String(index).padStart(2, '0')}`;
}

/** Every histogram counter, in bucket order. */
export const HISTOGRAM_COUNTERS: readonly string[] = TTFB_BOUNDS_MS.map((_, index) => histogramCounter(index));

/** The histogram bucket a time to first byte falls in: the first whose upper bound holds it. */
export function ttfbBucket(ms: number): number {
  const index = TTFB_BOUNDS_MS.findIndex((bound) => ms <= bound);
  return index === -1 ? TTFB_BOUNDS_MS.length - 1 : index;
}

/** An error for the rollups: an answer of 400 or above, or a response that did not end ok (a stream cut short). */
export function isError(status: number | undefined, outcome: string | undefined): boolean {
  return (status ?? 500) >= 400 || (outcome !== undefined && outcome !== 'ok');
}

/**
 * Longest dimension value kept, in UTF-16 units: at most 768 bytes of UTF-8, so a row's sort key
 * stays under DynamoDB's 1,024 bytes. A group name in the config is at most 256 characters.
 */
const MAX_VALUE_LENGTH = 256;

export function rollupValue(value: string): string {
  if (value.length <= MAX_VALUE_LENGTH) return value;
  const cut = value.slice(0, MAX_VALUE_LENGTH);
  // Never half a surrogate pair.
  return /[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/** The counters one event adds to each of its rows; zeros left out. */
export function eventCounters(event: RollupSource): RollupCounters {
  const counters: RollupCounters = { requests: 1 };
  if (isError(event.status, event.outcome)) counters.errors = 1;
  if (event.fallback) counters.fallbacks = 1;
  const usage = event.usage;
  if (usage) {
    if (usage.inputTokens) counters.inputTokens = usage.inputTokens;
    if (usage.outputTokens) counters.outputTokens = usage.outputTokens;
    if (usage.cacheReadTokens) counters.cacheReadTokens = usage.cacheReadTokens;
    if (usage.cacheWriteTokens) counters.cacheWriteTokens = usage.cacheWriteTokens;
  }
  if (event.costMicroUsd) counters.costMicroUsd = event.costMicroUsd;
  if (event.ttfbMs !== undefined) counters[histogramCounter(ttfbBucket(event.ttfbMs))] = 1;
  return counters;
}

/** The dimension values an event is counted under: everything, its key, person, groups, model and upstream. */
export function dimensionValues(event: Pick<RollupSource, 'keyId' | 'personSub' | 'groups' | 'modelDimension' | 'upstream'>): [Dimension, string][] {
  const values: [Dimension, string][] = [['all', '*']];
  if (event.keyId !== undefined) values.push(['key', event.keyId]);
  if (event.personSub !== undefined) values.push(['person', rollupValue(event.personSub)]);
  for (const group of new Set(event.groups.map(rollupValue))) values.push(['group', group]);
  values.push(['model', rollupValue(event.modelDimension)], ['upstream', event.upstream]);
  return values;
}

const DAY_S = 86_400;

/** The map key of a row. */
export function rowKey(pk: string, sk: string): string {
  return `${pk}\u0000${sk}`;
}

export function addCounters(into: RollupCounters, from: RollupCounters): void {
  for (const name in from) into[name] = (into[name] ?? 0) + (from[name] as number);
}

/**
 * Folds events into the increments of the rows they count in: every dimension value at every
 * granularity (hour, day, month). Added into `into` when given (a flush's pending rows, the
 * aggregator's minute), so folding events one by one or all at once gives the same rows.
 */
export function foldUsage(events: Iterable<RollupSource>, into = new Map<string, RollupIncrement>()): Map<string, RollupIncrement> {
  for (const event of events) foldCounters(event, eventCounters(event), into);
  return into;
}

/**
 * One step of the fold: adds `counters` to every row the event's dimension values count in, at
 * every granularity. (The benchmark seeds a year of rollups with it, one aggregated step per
 * hour and combination instead of one per request: the same rows, the same sums.)
 */
export function foldCounters(event: Pick<RollupSource, 'at' | 'keyId' | 'personSub' | 'groups' | 'modelDimension' | 'upstream'>, counters: RollupCounters, into: Map<string, RollupIncrement>): void {
  const values = dimensionValues(event);
  for (const granularity of GRANULARITIES) {
    const bucket = bucketOf(granularity, event.at);
    const period = periodOf(granularity, bucket);
    const expiresAt = bucketEnd(granularity, event.at).getTime() / 1000 + ROLLUP_RETENTION_DAYS[granularity] * DAY_S;
    for (const [dimension, value] of values) {
      const pk = statsKeys.rollup(granularity, dimension, period);
      const sk = statsKeys.rollupSort(bucket, value);
      const key = rowKey(pk, sk);
      const row = into.get(key);
      if (row) addCounters(row.counters, counters);
      else into.set(key, { pk, sk, expiresAt, counters: { ...counters } });
    }
  }
}
