import { bucketsBetween, granularityFor, partitionsBetween, type GranularityChoice, type RollupTotals, type Rollups } from './rollups.ts';
import type { Dimension, Granularity, RollupCounter } from './stats-table.ts';

/**
 * The spend explorer's series: the top `n` values of a dimension, bucket by bucket, read without
 * touching every value's every bucket (docs/console.md, "Reads"):
 * - which values: ranked by their totals over the whole days (an hourly series) or months (a
 *   daily or monthly one) the range touches: one Query per partition of those coarser rows;
 * - their buckets: picked by key, one BatchGetItem per 100 (n × buckets rows);
 * - every request per bucket: the `all` rows of the range (one Query per partition).
 * So a call reads about n × buckets rows, whatever the number of keys or people. The points of
 * the values shown and the totals are exact; only the choice of the n is made on whole days or
 * months.
 */
export interface TopSeries {
  granularity: Granularity;
  buckets: string[];
  /** The top values (most first), each with the sum of `counters` per bucket. */
  values: { value: string; points: number[] }[];
  /** Every request's counters per bucket (the `all` rows), by counter. */
  all: Partial<Record<RollupCounter, number[]>>;
  /** Values the ranking found beyond the top n. */
  more: number;
}

/** Most buckets one series has: 92 days of days, 16 days of hours, years of months. */
export const MAX_BUCKETS = 400;
const COARSER: Record<Granularity, Granularity> = { H: 'D', D: 'M', M: 'M' };

export async function topSeries(rollups: Rollups, dimension: Dimension, granularity: GranularityChoice, from: Date, to: Date, counters: readonly RollupCounter[], n: number): Promise<TopSeries> {
  const resolved = granularity === 'auto' ? granularityFor(from, to) : granularity;
  // Refuses a range wider than the granularity keeps before anything is read.
  partitionsBetween(resolved, from, to);
  const buckets = bucketsBetween(resolved, from, to);
  if (buckets.length > MAX_BUCKETS) throw new RangeError(`A series has at most ${MAX_BUCKETS} buckets (this range has ${buckets.length}); narrow it or use a coarser granularity.`);
  const sum = (totals: RollupTotals) => counters.reduce((total, counter) => total + totals[counter], 0);
  const [ranked, all] = await Promise.all([dimension === 'all' ? Promise.resolve([]) : rollups.totals(dimension, from, to, COARSER[resolved], counters), rollups.series('all', resolved, from, to, counters)]);
  const order = ranked.map(({ value, totals }) => ({ value, total: sum(totals) })).sort((a, b) => b.total - a.total || a.value.localeCompare(b.value));
  const top = order.slice(0, n);
  const rows = top.length === 0 ? new Map<string, RollupTotals>() : await rollups.rowsAt(dimension, top.flatMap(({ value }) => buckets.map((bucket) => ({ granularity: resolved, bucket, value }))), counters);
  return {
    granularity: resolved,
    buckets,
    values: top.map(({ value }) => ({ value, points: buckets.map((bucket) => {
      const totals = rows.get(`${resolved}#${bucket}#${value}`);
      return totals ? sum(totals) : 0;
    }) })),
    all: all.values[0]?.points ?? Object.fromEntries(counters.map((counter) => [counter, buckets.map(() => 0)])),
    more: Math.max(0, order.length - n),
  };
}
