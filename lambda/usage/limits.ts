import type { KeyLimits } from '../auth/key-table.ts';
import { totalTokens, type DayUsage } from './usage-store.ts';
import { utcDay } from './usage-table.ts';

export type BudgetPeriod = 'day' | 'month';

/** The first day of the UTC month `at` is in (budgets by month read from here). */
export function monthStart(at: Date): string {
  return `${utcDay(at).slice(0, 7)}-01`;
}

export function secondsUntilNextMinute(at: Date): number {
  return 60 - at.getUTCSeconds();
}

/** When the UTC day or calendar month `at` is in ends (epoch ms): a budget's reset. */
export function periodEnd(period: BudgetPeriod, at: Date): number {
  return period === 'day' ? Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1) : Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1);
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

/** Tokens and spend of today and of this month, from the key's day items (any models). */
export function usageInPeriods(days: readonly DayUsage[], at: Date): Record<BudgetPeriod, PeriodUse> {
  const today = utcDay(at);
  const month = today.slice(0, 7);
  const use = { day: { tokens: 0, costMicroUsd: 0 }, month: { tokens: 0, costMicroUsd: 0 } };
  for (const usage of days) {
    const tokens = totalTokens(usage);
    const cost = usage.costMicroUsd ?? 0;
    if (usage.day === today) {
      use.day.tokens += tokens;
      use.day.costMicroUsd += cost;
    }
    if (usage.day.startsWith(month)) {
      use.month.tokens += tokens;
      use.month.costMicroUsd += cost;
    }
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
