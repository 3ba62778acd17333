import type { KeyLimits } from '../auth/key-table.ts';
import { totalTokens, type DayUsage } from './usage-store.ts';
import { utcDay } from './usage-table.ts';

/** The first day of the UTC month `at` is in (budgets by month read from here). */
export function monthStart(at: Date): string {
  return `${utcDay(at).slice(0, 7)}-01`;
}

export function secondsUntilNextMinute(at: Date): number {
  return 60 - at.getUTCSeconds();
}

function secondsUntil(at: Date, next: number): number {
  return Math.max(1, Math.ceil((next - at.getTime()) / 1000));
}

/**
 * Which token budget a key has used up, if any, and when it frees up (UTC day or month end).
 * Budgets are checked before a request and charged after it, so requests already in flight
 * when a budget runs out can overshoot it by their own size.
 */
export function exhaustedBudget(limits: KeyLimits, days: DayUsage[], at: Date): { period: 'day' | 'month'; limit: number; retryAfterSeconds: number } | undefined {
  const today = utcDay(at);
  const month = today.slice(0, 7);
  let day = 0;
  let monthTotal = 0;
  for (const usage of days) {
    const tokens = totalTokens(usage);
    if (usage.day === today) day += tokens;
    if (usage.day.startsWith(month)) monthTotal += tokens;
  }
  if (limits.tokensPerDay !== undefined && day >= limits.tokensPerDay) {
    return { period: 'day', limit: limits.tokensPerDay, retryAfterSeconds: secondsUntil(at, Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1)) };
  }
  if (limits.tokensPerMonth !== undefined && monthTotal >= limits.tokensPerMonth) {
    return { period: 'month', limit: limits.tokensPerMonth, retryAfterSeconds: secondsUntil(at, Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)) };
  }
  return undefined;
}
