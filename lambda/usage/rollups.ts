import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoApi } from '../aws/dynamodb.ts';
import { batchGetRows } from './group-pools.ts';
import { HISTOGRAM_COUNTERS } from './rollup-fold.ts';
import { bucketEnd, bucketOf, periodOf, ROLLUP_COUNTERS, STATS_TABLE, statsKeys, TTFB_BOUNDS_MS, type Dimension, type Granularity, type RollupCounter } from './stats-table.ts';

/**
 * The rollups as the console and the admin API read them: pre-aggregated counters, never a scan
 * of usage. Every read is one Query per partition its range covers (a day of hour rows, a month
 * of day rows, a year of month rows), plus one more per further MB of rows in a partition (about
 * 4,000 rows: a month of day rows of 130 people). Layout: docs/console.md, "Usage rollups".
 *
 * Ranges are whole buckets: from the bucket holding `from` to the one holding `to`, inclusive.
 */

export type GranularityChoice = Granularity | 'auto';
export type SeriesMetric = RollupCounter | 'ttfbP50' | 'ttfbP99';

export interface RollupTotals extends Record<RollupCounter, number> {
  /** Time-to-first-byte histogram: `ttfb[i]` requests took at most TTFB_BOUNDS_MS[i] ms (and more than the bound before). */
  ttfb: number[];
}

export interface ValueTotals {
  /** The dimension value: a key id, a person's sub, a group, a model, an upstream, `*` for `all`. */
  value: string;
  totals: RollupTotals;
}

export interface Series {
  granularity: Granularity;
  /** Every bucket of the range in order (`2026-11-26T14`, `2026-11-26`, `2026-11`), empty ones included. */
  buckets: string[];
  /** One entry per value with usage in the range: for each metric asked, one number per bucket (0 where none). */
  values: { value: string; points: Partial<Record<SeriesMetric, number[]>> }[];
}

const DAY_MS = 86_400_000;

/** 'auto': hours for ranges up to 2 days, days up to 92 days, months beyond. */
export function granularityFor(from: Date, to: Date): Granularity {
  const span = to.getTime() - from.getTime();
  return span <= 2 * DAY_MS ? 'H' : span <= 92 * DAY_MS ? 'D' : 'M';
}

/** Most partitions one read may cover: a granularity's retention (35 days, 400 days, 5 years) and one. */
export const MAX_PARTITIONS: Record<Granularity, number> = { H: 36, D: 15, M: 7 };

/** Every bucket from the one holding `from` to the one holding `to`. */
export function bucketsBetween(granularity: Granularity, from: Date, to: Date): string[] {
  const last = bucketOf(granularity, to);
  const buckets: string[] = [];
  for (let at = from, bucket = bucketOf(granularity, at); bucket <= last; at = bucketEnd(granularity, at), bucket = bucketOf(granularity, at)) buckets.push(bucket);
  return buckets;
}

/** The partitions (days, months or years) the range's buckets are in; a RangeError beyond MAX_PARTITIONS. */
export function partitionsBetween(granularity: Granularity, from: Date, to: Date): string[] {
  if (to < from) throw new RangeError('The range ends before it starts.');
  const last = periodOf(granularity, bucketOf(granularity, to));
  const periods: string[] = [];
  for (let i = 0; ; i++) {
    const period = periodOf(granularity, bucketOf(granularity, partitionStart(granularity, from, i)));
    if (period > last) return periods;
    if (periods.length === MAX_PARTITIONS[granularity]) throw new RangeError(`A range at granularity ${granularity} covers at most ${MAX_PARTITIONS[granularity]} partitions (its retention); narrow it or use a coarser granularity.`);
    periods.push(period);
  }
}

/** The start of the `i`-th partition from the one holding `from`. */
function partitionStart(granularity: Granularity, from: Date, i: number): Date {
  const y = from.getUTCFullYear();
  const m = from.getUTCMonth();
  return new Date(granularity === 'H' ? Date.UTC(y, m, from.getUTCDate() + i) : granularity === 'D' ? Date.UTC(y, m + i, 1) : Date.UTC(y + i, 0, 1));
}

/**
 * A percentile of a time-to-first-byte histogram, interpolated within its bucket (the open-ended
 * last bucket answers its lower bound). Undefined when the histogram is empty.
 */
export function ttfbPercentile(histogram: readonly number[], fraction: number): number | undefined {
  const total = histogram.reduce((sum, count) => sum + count, 0);
  if (total === 0) return undefined;
  const rank = fraction * total;
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    const count = histogram[i] as number;
    if (count > 0 && seen + count >= rank) {
      const lower = i === 0 ? 0 : (TTFB_BOUNDS_MS[i - 1] as number);
      const upper = TTFB_BOUNDS_MS[i] as number;
      return Number.isFinite(upper) ? lower + ((upper - lower) * (rank - seen)) / count : lower;
    }
    seen += count;
  }
  return undefined;
}

export function emptyTotals(): RollupTotals {
  const totals = { ttfb: HISTOGRAM_COUNTERS.map(() => 0) } as RollupTotals;
  for (const counter of ROLLUP_COUNTERS) totals[counter] = 0;
  return totals;
}

/** Adds a row's attributes to totals. */
export function addRow(totals: RollupTotals, item: Record<string, AttributeValue>): void {
  for (const counter of ROLLUP_COUNTERS) totals[counter] += Number(item[counter]?.N ?? 0);
  for (const [i, name] of HISTOGRAM_COUNTERS.entries()) totals.ttfb[i] = (totals.ttfb[i] as number) + Number(item[name]?.N ?? 0);
}

/** The attributes a metric is computed from (what a read needs to fetch of each row). */
export function attributesOf(metrics: readonly SeriesMetric[]): string[] {
  return [...new Set(metrics.flatMap((metric) => (metric === 'ttfbP50' || metric === 'ttfbP99' ? HISTOGRAM_COUNTERS : [metric])))];
}

function metricOf(totals: RollupTotals, metric: SeriesMetric): number {
  if (metric === 'ttfbP50' || metric === 'ttfbP99') return ttfbPercentile(totals.ttfb, metric === 'ttfbP50' ? 0.5 : 0.99) ?? 0;
  return totals[metric];
}

interface Row {
  bucket: string;
  value: string;
  item: Record<string, AttributeValue>;
}

export class Rollups {
  readonly #tableName: string;
  readonly #client: DynamoApi;

  constructor(tableName: string, client: DynamoApi) {
    this.#tableName = tableName;
    this.#client = client;
  }

  /**
   * One time series per value of a dimension over a range: for the spend explorer. Queries: one
   * per partition covered (with 'auto': at most 3 for hours, 4 for days, 6 for months).
   */
  async series(dimension: Dimension, granularity: GranularityChoice, from: Date, to: Date, metrics: readonly SeriesMetric[]): Promise<Series> {
    const resolved = granularity === 'auto' ? granularityFor(from, to) : granularity;
    // The partitions first: they refuse a range too wide before its buckets are listed.
    const partitions = partitionsBetween(resolved, from, to);
    const buckets = bucketsBetween(resolved, from, to);
    const index = new Map(buckets.map((bucket, i) => [bucket, i]));
    const perValue = new Map<string, RollupTotals[]>();
    // Only the attributes the metrics need are fetched: a row holds up to 27 counters.
    for (const row of await this.#rows(resolved, dimension, partitions, from, to, attributesOf(metrics))) {
      const at = index.get(row.bucket);
      if (at === undefined) continue;
      let cells = perValue.get(row.value);
      if (!cells) perValue.set(row.value, (cells = buckets.map(() => emptyTotals())));
      addRow(cells[at] as RollupTotals, row.item);
    }
    const values = [...perValue].map(([value, cells]) => ({ value, points: Object.fromEntries(metrics.map((metric) => [metric, cells.map((cell) => metricOf(cell, metric))])) }));
    return { granularity: resolved, buckets, values };
  }

  /**
   * Each value's totals over a range (counters and TTFB histogram; only `counters` when given,
   * the others then read as 0): the same Queries as `series`.
   */
  async totals(dimension: Dimension, from: Date, to: Date, granularity: GranularityChoice = 'auto', counters?: readonly RollupCounter[]): Promise<ValueTotals[]> {
    const resolved = granularity === 'auto' ? granularityFor(from, to) : granularity;
    const perValue = new Map<string, RollupTotals>();
    for (const row of await this.#rows(resolved, dimension, partitionsBetween(resolved, from, to), from, to, counters)) {
      let totals = perValue.get(row.value);
      if (!totals) perValue.set(row.value, (totals = emptyTotals()));
      addRow(totals, row.item);
    }
    return [...perValue].map(([value, totals]) => ({ value, totals }));
  }

  /** The `n` values with the most of `metric` over a range, most first: the same Queries as `series`. */
  async top(dimension: Dimension, metric: RollupCounter, n: number, from: Date, to: Date, granularity: GranularityChoice = 'auto', counters?: readonly RollupCounter[]): Promise<ValueTotals[]> {
    const totals = await this.totals(dimension, from, to, granularity, counters && [...new Set([metric, ...counters])]);
    return totals.sort((a, b) => b.totals[metric] - a.totals[metric] || a.value.localeCompare(b.value)).slice(0, n);
  }

  /** Time to first byte over a range, per value: p50 and p99 from the summed histograms (ms). The same Queries as `series`. */
  async ttfb(dimension: Dimension, from: Date, to: Date, granularity: GranularityChoice = 'auto'): Promise<{ value: string; p50: number | undefined; p99: number | undefined; count: number }[]> {
    return (await this.totals(dimension, from, to, granularity)).map(({ value, totals }) => ({
      value,
      p50: ttfbPercentile(totals.ttfb, 0.5),
      p99: ttfbPercentile(totals.ttfb, 0.99),
      count: totals.ttfb.reduce((sum, count) => sum + count, 0),
    }));
  }

  /**
   * When the rollups are complete up to: on Lambda the end of the last minute the aggregator
   * folded (one GetItem); undefined on npm start, whose rollups are written directly at each flush.
   */
  async asOf(): Promise<Date | undefined> {
    const { Item: item } = await this.#client.call('GetItem', { TableName: this.#tableName, Key: { [STATS_TABLE.partitionKey]: { S: statsKeys.cursor.pk }, [STATS_TABLE.sortKey]: { S: statsKeys.cursor.sk } } });
    return item?.lastMinute?.N === undefined ? undefined : new Date((Number(item.lastMinute.N) + 1) * 60_000);
  }

  /**
   * Rows picked one by one (a dimension value's buckets): one BatchGetItem per 100 rows (with
   * `counters`, only those are fetched). Keyed by `<granularity>#<bucket>#<value>`; rows without
   * usage are absent.
   */
  async rowsAt(dimension: Dimension, cells: readonly { granularity: Granularity; bucket: string; value: string }[], counters?: readonly RollupCounter[]): Promise<Map<string, RollupTotals>> {
    const keys = cells.map(({ granularity, bucket, value }) => ({
      [STATS_TABLE.partitionKey]: { S: statsKeys.rollup(granularity, dimension, periodOf(granularity, bucket)) },
      [STATS_TABLE.sortKey]: { S: statsKeys.rollupSort(bucket, value) },
    }));
    const found = new Map<string, RollupTotals>();
    for (const item of await batchGetRows(this.#tableName, this.#client, keys, counters)) {
      const granularity = (item[STATS_TABLE.partitionKey]?.S ?? '').split('#')[1] as Granularity;
      const totals = emptyTotals();
      addRow(totals, item);
      found.set(`${granularity}#${item[STATS_TABLE.sortKey]?.S ?? ''}`, totals);
    }
    return found;
  }

  async #rows(granularity: Granularity, dimension: Dimension, partitions: string[], from: Date, to: Date, attributes?: readonly string[]): Promise<Row[]> {
    const low = `${bucketOf(granularity, from)}#`;
    // '$' follows '#': every sort key of the last bucket is below it, whatever its value.
    const high = `${bucketOf(granularity, to)}$`;
    const pages = await Promise.all(partitions.map((period) => this.#query(statsKeys.rollup(granularity, dimension, period), low, high, attributes)));
    return pages.flat().map((item) => {
      const sk = item[STATS_TABLE.sortKey]?.S ?? '';
      const cut = sk.indexOf('#');
      return { bucket: sk.slice(0, cut), value: sk.slice(cut + 1), item };
    });
  }

  async #query(pk: string, low: string, high: string, attributes?: readonly string[]): Promise<Record<string, AttributeValue>[]> {
    const items: Record<string, AttributeValue>[] = [];
    let start: Record<string, AttributeValue> | undefined;
    const names: Record<string, string> = { '#pk': STATS_TABLE.partitionKey, '#sk': STATS_TABLE.sortKey };
    attributes?.forEach((name, i) => (names[`#a${i}`] = name));
    const projection = attributes && { ProjectionExpression: ['#sk', ...attributes.map((_, i) => `#a${i}`)].join(', ') };
    do {
      const page = await this.#client.call('Query', {
        TableName: this.#tableName,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :low AND :high',
        ExpressionAttributeNames: names,
        ...projection,
        ExpressionAttributeValues: { ':pk': { S: pk }, ':low': { S: low }, ':high': { S: high } },
        ...(start ? { ExclusiveStartKey: start } : {}),
      });
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  }
}
