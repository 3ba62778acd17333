import type { KeyLimits } from '../auth/key-table.ts';
import { totalTokens, type DayUsage } from './usage-store.ts';
import { utcDay } from './usage-table.ts';

/** Budget and cap periods: the UTC day, the week from Monday 00:00 UTC, the calendar month. */
export type BudgetPeriod = 'day' | 'week' | 'month';

const DAY_MS = 86_400_000;

/** The first day of the UTC month `at` is in (budgets by month read from here). */
export function monthStart(at: Date): string {
  return `${utcDay(at).slice(0, 7)}-01`;
}

/** The Monday (UTC) of the week `at` is in. */
export function weekStart(at: Date): string {
  const day = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  return utcDay(new Date(day - ((at.getUTCDay() + 6) % 7) * DAY_MS));
}

/**
 * The first day whose items `usageInPeriods` needs: the month's first, or the week's Monday when
 * the week began in the previous month. Read an account's days from here.
 */
export function periodsStart(at: Date): string {
  const week = weekStart(at);
  const month = monthStart(at);
  return week < month ? week : month;
}

export function secondsUntilNextMinute(at: Date): number {
  return 60 - at.getUTCSeconds();
}

/** When the UTC day, week or calendar month `at` is in ends (epoch ms): a budget's reset. */
export function periodEnd(period: BudgetPeriod, at: Date): number {
  if (period === 'day') return Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1);
  if (period === 'week') return Date.parse(`${weekStart(at)}T00:00:00Z`) + 7 * DAY_MS;
  return Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1);
}

function secondsUntil(at: Date, next: number): number {
  return Math.max(1, Math.ceil((next - at.getTime()) / 1000));
}

/** True when the key has a budget that needs its recorded usage (the month's day items) checked. */
export function hasBudget(limits: KeyLimits | undefined): boolean {
  return limits !== undefined && [limits.tokensPerDay, limits.tokensPerMonth, limits.microUsdPerDay, limits.microUsdPerMonth].some((limit) => limit !== undefined);
}

export interface PeriodUse {
  tokens: number;
  costMicroUsd: number;
}

/**
 * Tokens and spend of today, this week and this month, from an account's day items (any models;
 * read them from `periodsStart(at)`, or the week may miss its days of the previous month).
 */
export function usageInPeriods(days: readonly DayUsage[], at: Date): Record<BudgetPeriod, PeriodUse> {
  const today = utcDay(at);
  const week = weekStart(at);
  const nextWeek = utcDay(new Date(periodEnd('week', at)));
  const month = today.slice(0, 7);
  const use = { day: { tokens: 0, costMicroUsd: 0 }, week: { tokens: 0, costMicroUsd: 0 }, month: { tokens: 0, costMicroUsd: 0 } };
  const add = (into: PeriodUse, tokens: number, cost: number) => {
    into.tokens += tokens;
    into.costMicroUsd += cost;
  };
  for (const usage of days) {
    const tokens = totalTokens(usage);
    const cost = usage.costMicroUsd ?? 0;
    if (usage.day === today) add(use.day, tokens, cost);
    if (usage.day >= week && usage.day < nextWeek) add(use.week, tokens, cost);
    if (usage.day.startsWith(month)) add(use.month, tokens, cost);
  }
  return use;
}

/**
 * Which token budget a key has used up, if any, and when it frees up (UTC day or month end).
 * Budgets are checked before a request and charged after it, so requests already in flight
 * when a budget runs out can overshoot it by their own size.
 */
export function exhaustedBudget(limits: KeyLimits, days: DayUsage[], at: Date): { period: BudgetPeriod; limit: number; retryAfterSeconds: number } | undefined {
  const use = usageInPeriods(days, at);
  if (limits.tokensPerDay !== undefined && use.day.tokens >= limits.tokensPerDay) {
    return { period: 'day', limit: limits.tokensPerDay, retryAfterSeconds: secondsUntil(at, periodEnd('day', at)) };
  }
  if (limits.tokensPerMonth !== undefined && use.month.tokens >= limits.tokensPerMonth) {
    return { period: 'month', limit: limits.tokensPerMonth, retryAfterSeconds: secondsUntil(at, periodEnd('month', at)) };
  }
  return undefined;
}

export interface ExhaustedSpend {
  period: BudgetPeriod;
  limitMicroUsd: number;
  spentMicroUsd: number;
  /** Seconds until the budget resets (UTC midnight or the first of next month), at least 1. */
  retryAfterSeconds: number;
  resetsAt: Date;
}

/**
 * Which dollar budget a key has spent, if any: spent >= budget refuses. When both are spent the
 * month is named, since it resets last and retrying earlier would be refused again. As with
 * tokens, requests in flight when a budget runs out can overshoot it by their own cost.
 */
export function exhaustedSpend(limits: KeyLimits, days: readonly DayUsage[], at: Date): ExhaustedSpend | undefined {
  const use = usageInPeriods(days, at);
  for (const [period, limit] of [['month', limits.microUsdPerMonth], ['day', limits.microUsdPerDay]] as const) {
    if (limit === undefined || use[period].costMicroUsd < limit) continue;
    const end = periodEnd(period, at);
    return { period, limitMicroUsd: limit, spentMicroUsd: use[period].costMicroUsd, retryAfterSeconds: secondsUntil(at, end), resetsAt: new Date(end) };
  }
  return undefined;
}
