import type { HandlerResponse } from '../../deps.ts';
import type { GranularityChoice, SeriesMetric } from '../../usage/rollups.ts';
import { topSeries } from '../../usage/rollup-top.ts';
import { DIMENSIONS, type Dimension, type Granularity } from '../../usage/stats-table.ts';
import type { AdminContext } from '../context.ts';
import { adminError, securityHeaders } from '../http.ts';
import { asOf, noRollups } from './rollup-views.ts';

/**
 * GET /admin/api/usage: the spend explorer's one time series. `metric` (cost, tokens, the four
 * kinds of tokens, requests, errors, fallbacks), `by` a dimension (none, person, group, key, model,
 * upstream), `from`/`to` (ISO times; default the last 7 days), `granularity` (auto: hours up to 2
 * days, days up to 92, months beyond), `top` (the values shown, 1 to 20, the rest as "other"),
 * `format=csv` for the same table as a file. Reads (lambda/usage/rollup-top.ts): the ranking's
 * coarser rows and the `all` rows (one Query per partition each), the top values' buckets by key
 * (one BatchGetItem per 100), and their labels (docs/console.md, "Reads").
 */
export const METRICS = {
  cost: { unit: 'microUsd', counters: ['costMicroUsd'] },
  tokens: { unit: 'tokens', counters: ['inputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'outputTokens'] },
  inputTokens: { unit: 'tokens', counters: ['inputTokens'] },
  cacheReadTokens: { unit: 'tokens', counters: ['cacheReadTokens'] },
  cacheWriteTokens: { unit: 'tokens', counters: ['cacheWriteTokens'] },
  outputTokens: { unit: 'tokens', counters: ['outputTokens'] },
  requests: { unit: 'requests', counters: ['requests'] },
  errors: { unit: 'requests', counters: ['errors'] },
  fallbacks: { unit: 'requests', counters: ['fallbacks'] },
} as const satisfies Record<string, { unit: string; counters: readonly SeriesMetric[] }>;
export type Metric = keyof typeof METRICS;

const TOKEN_KINDS: Record<string, string> = { inputTokens: 'Input', cacheReadTokens: 'Cache read', cacheWriteTokens: 'Cache write', outputTokens: 'Output' };
/** What the rest of the total is, beside the top values. */
const OTHER_LABELS: Partial<Record<Dimension, string>> = {
  key: 'Everything else (other keys, and sign-ins without a key)',
  person: 'Everything else (other people, and keys of no one)',
  model: 'Other models',
  upstream: 'Other upstreams',
};
const GRANULARITY: Record<string, GranularityChoice> = { auto: 'auto', hour: 'H', day: 'D', month: 'M' };
const DAY_MS = 86_400_000;
/** Oldest start a range may have: the month rollups' five years. */
const OLDEST_MS = 5 * 366 * DAY_MS;

export interface ExplorerSeries {
  value: string;
  label: string | null;
  points: number[];
  total: number;
}

export interface Explorer {
  metric: Metric;
  unit: string;
  by: Dimension | 'none';
  granularity: Granularity;
  from: string;
  to: string;
  /** Buckets as stored (UTC): `2026-11-26T14`, `2026-11-26`, `2026-11`; and their starts (epoch ms). */
  buckets: string[];
  bucketStarts: number[];
  series: ExplorerSeries[];
  /** The rest of all requests beside the values shown (none for groups: a request counts in each of its groups). */
  other: { count: number; points: number[]; total: number; label: string } | null;
  /** Every request, per bucket. */
  total: { points: number[]; total: number; label: string };
  note?: string;
  asOf: string | null;
  live: boolean;
}

function parseTime(text: string | null, name: string, fallback: number): Date {
  if (text === null || text === '') return new Date(fallback);
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : Date.parse(text);
  if (!Number.isFinite(ms)) throw adminError.invalid(`${name} must be an ISO time (2026-11-26T14:00:00Z) or a day (2026-11-26).`, name);
  return new Date(ms);
}

export function bucketStart(bucket: string): number {
  return Date.parse(bucket.length === 13 ? `${bucket}:00:00Z` : bucket.length === 10 ? `${bucket}T00:00:00Z` : `${bucket}-01T00:00:00Z`);
}

export async function explore(context: AdminContext): Promise<Explorer> {
  const rollups = context.rollups;
  if (!rollups) throw noRollups();
  const query = context.request.query;
  const metric = (query.get('metric') ?? 'cost') as Metric;
  if (!Object.hasOwn(METRICS, metric)) throw adminError.invalid(`metric must be one of ${Object.keys(METRICS).join(', ')}.`, 'metric');
  const by = query.get('by') ?? 'none';
  if (by !== 'none' && !(DIMENSIONS as readonly string[]).includes(by)) throw adminError.invalid('by must be none, person, group, key, model or upstream.', 'by');
  const granularity = GRANULARITY[query.get('granularity') ?? 'auto'];
  if (granularity === undefined) throw adminError.invalid('granularity must be auto, hour, day or month.', 'granularity');
  const top = Number(query.get('top') ?? 8);
  if (!Number.isInteger(top) || top < 1 || top > 20) throw adminError.invalid('top must be a whole number from 1 to 20.', 'top');
  const now = context.now();
  const to = parseTime(query.get('to'), 'to', now);
  const from = parseTime(query.get('from'), 'from', to.getTime() - 7 * DAY_MS);
  if (from >= to) throw adminError.invalid('from must be before to.', 'from');
  if (from.getTime() < now - OLDEST_MS || to.getTime() > now + DAY_MS) throw adminError.invalid('The range must lie within the last five years.', 'from');

  const dimension: Dimension = by === 'none' ? 'all' : (by as Dimension);
  const counters = METRICS[metric].counters;
  let read;
  try {
    read = await topSeries(rollups, dimension, granularity, from, to, counters, top);
  } catch (error) {
    if (error instanceof RangeError) throw adminError.invalid(`${error.message} (hours are kept 35 days, days 400, months five years)`, 'granularity');
    throw error;
  }
  const totalOf = (points: number[]) => points.reduce((total, point) => total + point, 0);
  const allPoints = read.buckets.map((_, i) => counters.reduce((total, counter) => total + (read.all[counter]?.[i] ?? 0), 0));
  let shown: ExplorerSeries[];
  let other: Explorer['other'] = null;
  if (dimension === 'all') {
    // The total; for tokens, one series per kind: what the total is made of.
    const kinds = metric === 'tokens' ? counters : [];
    shown = kinds.length > 0
      ? kinds.map((counter) => {
          const points = read.buckets.map((_, i) => read.all[counter]?.[i] ?? 0);
          return { value: counter, label: TOKEN_KINDS[counter] ?? counter, points, total: totalOf(points) };
        })
      : [{ value: '*', label: 'All', points: allPoints, total: totalOf(allPoints) }];
  } else {
    const labels = await context.labels.of(dimension, read.values.map((entry) => entry.value));
    shown = read.values.map(({ value, points }) => ({ value, label: labels.get(value) ?? null, points, total: totalOf(points) }));
    // Each request has one key (or none), one person (or none), one model, one upstream: the rest of
    // the total is everything the top values leave. A request counts in each of its groups, so groups have no such rest.
    if (dimension !== 'group') {
      const points = read.buckets.map((_, i) => Math.max(0, (allPoints[i] ?? 0) - shown.reduce((total, entry) => total + (entry.points[i] ?? 0), 0)));
      if (read.more > 0 || points.some((point) => point > 0)) other = { count: read.more, points, total: totalOf(points), label: OTHER_LABELS[dimension] ?? 'Everything else' };
    }
  }
  return {
    metric,
    unit: METRICS[metric].unit,
    by: by as Explorer['by'],
    granularity: read.granularity,
    from: from.toISOString(),
    to: to.toISOString(),
    buckets: read.buckets,
    bucketStarts: read.buckets.map(bucketStart),
    series: shown,
    other,
    total: { points: allPoints, total: totalOf(allPoints), label: 'All requests' },
    ...(dimension === 'group' ? { note: 'A request counts in each of its person\'s groups: the groups do not add up to all requests.' } : {}),
    ...(await asOf(context)),
  };
}

/** A CSV field: quoted when needed, and never read as a formula by a spreadsheet (OWASP's CSV injection advice). */
export function csvField(text: string): string {
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The explorer's table as CSV: one row per bucket (its UTC start), one column per series, then other and total. */
export function explorerCsv(explorer: Explorer): string {
  const value = (n: number) => (explorer.unit === 'microUsd' ? (n / 1e6).toFixed(6) : String(n));
  const unit = explorer.unit === 'microUsd' ? 'USD' : explorer.unit;
  const header = ['bucket_start_utc', ...explorer.series.map((entry) => `${entry.label ?? entry.value} (${unit})`), ...(explorer.other ? [`${explorer.other.label} (${unit})`] : []), `${explorer.total.label} (${unit})`];
  const rows = explorer.buckets.map((_, i) => [
    new Date(explorer.bucketStarts[i] as number).toISOString(),
    ...explorer.series.map((entry) => value(entry.points[i] ?? 0)),
    ...(explorer.other ? [value(explorer.other.points[i] ?? 0)] : []),
    value(explorer.total.points[i] ?? 0),
  ]);
  return `${[header, ...rows].map((row) => row.map(csvField).join(',')).join('\r\n')}\r\n`;
}

export async function usage(context: AdminContext): Promise<Explorer | HandlerResponse> {
  const explorer = await explore(context);
  if (context.request.query.get('format') !== 'csv') return explorer;
  const name = `usage-${explorer.metric}-by-${explorer.by}-${explorer.from.slice(0, 10)}-${explorer.to.slice(0, 10)}.csv`;
  return {
    statusCode: 200,
    headers: { ...securityHeaders(context.request.origin), 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${name}"`, 'cache-control': 'no-store' },
    body: explorerCsv(explorer),
  };
}
