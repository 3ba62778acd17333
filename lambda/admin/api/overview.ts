import { weekStart } from '../../usage/limits.ts';
import { emptyTotals, ttfbPercentile, type RollupTotals } from '../../usage/rollups.ts';
import { bucketOf, type Dimension, type Granularity } from '../../usage/stats-table.ts';
import { utcDay } from '../../usage/usage-table.ts';
import type { AdminContext } from '../context.ts';
import { adminError } from '../http.ts';
import { asOf, noRollups } from './rollup-views.ts';

/**
 * GET /admin/api/overview[?period=day|week|month]: spend, requests, errors and time to first
 * byte today, this week (from Monday, UTC) and this month, the caps they are held against, and
 * the top people, groups, keys and models of `period` (default month). Reads: one GetItem (as
 * of), one BatchGetItem (the `all` rows of the three periods), one Query per dimension (4), one
 * BatchGetItem per 12 pool groups, and the labels of the top values (docs/console.md, "Reads").
 */
const PERIODS = ['day', 'week', 'month'] as const;
type Period = (typeof PERIODS)[number];
const TOP_DIMENSIONS: Dimension[] = ['person', 'group', 'key', 'model'];
const TOP_N = 5;
const DAY_MS = 86_400_000;

/** A period's numbers, as the console shows them. */
export function periodSummary(totals: RollupTotals) {
  return {
    costMicroUsd: totals.costMicroUsd,
    requests: totals.requests,
    errors: totals.errors,
    errorRate: totals.requests > 0 ? totals.errors / totals.requests : 0,
    fallbacks: totals.fallbacks,
    inputTokens: totals.inputTokens,
    outputTokens: totals.outputTokens,
    cacheReadTokens: totals.cacheReadTokens,
    cacheWriteTokens: totals.cacheWriteTokens,
    ttfbP50Ms: ttfbPercentile(totals.ttfb, 0.5) ?? null,
    ttfbP99Ms: ttfbPercentile(totals.ttfb, 0.99) ?? null,
  };
}

/** When each period starts (UTC), and the granularity its rows are read at. */
export function periodStart(period: Period, at: Date): { from: Date; granularity: Granularity } {
  if (period === 'day') return { from: new Date(`${utcDay(at)}T00:00:00Z`), granularity: 'D' };
  if (period === 'week') return { from: new Date(`${weekStart(at)}T00:00:00Z`), granularity: 'D' };
  return { from: new Date(`${bucketOf('M', at)}-01T00:00:00Z`), granularity: 'M' };
}

export async function overview(context: AdminContext) {
  const rollups = context.rollups;
  if (!rollups) throw noRollups();
  const period = context.request.query.get('period') ?? 'month';
  if (!(PERIODS as readonly string[]).includes(period)) throw adminError.invalid('period must be day, week or month.', 'period');
  const now = new Date(context.now());
  const today = utcDay(now);
  const monday = Date.parse(`${weekStart(now)}T00:00:00Z`);
  const weekDays = Array.from({ length: 7 }, (_, i) => utcDay(new Date(monday + i * DAY_MS))).filter((day) => day <= today);
  const month = bucketOf('M', now);
  const cells = [{ granularity: 'M' as const, bucket: month, value: '*' }, ...weekDays.map((day) => ({ granularity: 'D' as const, bucket: day, value: '*' }))];
  const { from: topFrom, granularity: topGranularity } = periodStart(period as Period, now);
  const [rows, tops, pools, asOfTime] = await Promise.all([
    rollups.rowsAt('all', cells),
    Promise.all(TOP_DIMENSIONS.map((dimension) => rollups.top(dimension, 'costMicroUsd', TOP_N, topFrom, now, topGranularity, ['requests', 'errors']))),
    poolStanding(context, now),
    asOf(context),
  ]);
  const week = emptyTotals();
  for (const day of weekDays) addTotals(week, rows.get(`D#${day}#*`));
  const top: Record<string, unknown[]> = {};
  await Promise.all(
    TOP_DIMENSIONS.map(async (dimension, i) => {
      const entries = tops[i] ?? [];
      const labels = await context.labels.of(dimension, entries.map((entry) => entry.value));
      top[dimension] = entries.map(({ value, totals }) => ({ value, label: labels.get(value) ?? null, costMicroUsd: totals.costMicroUsd, requests: totals.requests, errors: totals.errors }));
    }),
  );
  const caps = context.identityConfig?.caps;
  return {
    now: now.toISOString(),
    ...asOfTime,
    periods: {
      day: { from: `${today}T00:00:00.000Z`, ...periodSummary(rows.get(`D#${today}#*`) ?? emptyTotals()) },
      week: { from: new Date(monday).toISOString(), ...periodSummary(week) },
      month: { from: `${month}-01T00:00:00.000Z`, ...periodSummary(rows.get(`M#${month}#*`) ?? emptyTotals()) },
    },
    caps: context.identityConfig ? { perPersonDefault: caps?.default ?? null, groupMode: caps?.groupMode ?? 'min', pools } : null,
    top: { period, from: topFrom.toISOString(), ...top },
  };
}

function addTotals(into: RollupTotals, from: RollupTotals | undefined): void {
  if (!from) return;
  for (const [name, value] of Object.entries(from)) {
    if (name === 'ttfb') (value as number[]).forEach((count, i) => (into.ttfb[i] = (into.ttfb[i] ?? 0) + count));
    else {
      const counters = into as unknown as Record<string, number>;
      counters[name] = (counters[name] ?? 0) + (value as number);
    }
  }
}

/** Each configured group pool: its caps (USD) and what the group spent this day, week and month (micro-dollars). */
async function poolStanding(context: AdminContext, now: Date) {
  const pools = Object.entries(context.identityConfig?.caps?.pools ?? {});
  if (pools.length === 0 || !context.stats) return [];
  const spent = await context.stats.read(pools.map(([group]) => group), now);
  return pools.map(([group, caps]) => ({ group, caps, spentMicroUsd: spent.get(group) ?? { day: 0, week: 0, month: 0 } }));
}
