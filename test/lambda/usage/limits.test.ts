import { day } from './day-usage.ts';
import { exhaustedBudget, exhaustedSpend, hasBudget, periodEnd, periodsStart, usageInPeriods, weekStart } from '../../../lambda/usage/limits.ts';


const NOW = new Date('2026-11-21T22:00:00Z');

describe('dollar budgets', () => {
  test('spent below the day budget is allowed; exactly the budget refuses until UTC midnight', () => {
    const limits = { microUsdPerDay: 100 };
    expect(exhaustedSpend(limits, [day('2026-11-21', { costMicroUsd: 99 })], NOW)).toBeUndefined();
    expect(exhaustedSpend(limits, [day('2026-11-21', { costMicroUsd: 60 }), day('2026-11-21', { model: 'gpt-5.5', costMicroUsd: 40 })], NOW)).toEqual({
      period: 'day',
      limitMicroUsd: 100,
      spentMicroUsd: 100,
      retryAfterSeconds: 2 * 3600,
      resetsAt: new Date('2026-11-22T00:00:00Z'),
    });
  });

  test('yesterday does not count for the day, it does for the month', () => {
    const days = [day('2026-11-20', { costMicroUsd: 5_000_000 }), day('2026-11-21', { costMicroUsd: 1 })];
    expect(exhaustedSpend({ microUsdPerDay: 2 }, days, NOW)).toBeUndefined();
    expect(exhaustedSpend({ microUsdPerMonth: 5_000_001 }, days, NOW)).toMatchObject({ period: 'month', spentMicroUsd: 5_000_001, resetsAt: new Date('2026-12-01T00:00:00Z') });
    expect(exhaustedSpend({ microUsdPerMonth: 5_000_002 }, days, NOW)).toBeUndefined();
  });

  test('the previous month does not count', () => {
    expect(exhaustedSpend({ microUsdPerMonth: 10 }, [day('2026-10-31', { costMicroUsd: 50 })], NOW)).toBeUndefined();
  });

  test('when both are spent the month is reported, since it resets last', () => {
    expect(exhaustedSpend({ microUsdPerDay: 10, microUsdPerMonth: 10 }, [day('2026-11-21', { costMicroUsd: 10 })], NOW)).toMatchObject({ period: 'month', retryAfterSeconds: 9 * 86400 + 2 * 3600 });
  });

  test('retry-after is at least a second, at the last instant of a period', () => {
    expect(exhaustedSpend({ microUsdPerDay: 1 }, [day('2026-11-30', { costMicroUsd: 1 })], new Date('2026-11-30T23:59:59.999Z'))?.retryAfterSeconds).toBe(1);
    expect(periodEnd('month', new Date('2026-12-31T12:00:00Z'))).toBe(Date.parse('2027-01-01T00:00:00Z'));
  });

  test('token budgets behave as before and ignore spend', () => {
    const days = [day('2026-11-21', { inputTokens: 600, outputTokens: 300, cacheReadTokens: 50, cacheWriteTokens: 50, costMicroUsd: 1e9 })];
    expect(exhaustedBudget({ tokensPerDay: 1_001 }, days, NOW)).toBeUndefined();
    expect(exhaustedBudget({ tokensPerDay: 1_000 }, days, NOW)).toEqual({ period: 'day', limit: 1_000, retryAfterSeconds: 7_200 });
    expect(exhaustedBudget({ microUsdPerDay: 1 }, days, NOW)).toBeUndefined();
  });

  test('usage per period and whether a key needs its usage read', () => {
    expect(usageInPeriods([day('2026-11-21', { inputTokens: 5, costMicroUsd: 7 }), day('2026-11-02', { outputTokens: 1, costMicroUsd: 3 })], NOW)).toEqual({
      day: { tokens: 5, costMicroUsd: 7 },
      week: { tokens: 5, costMicroUsd: 7 },
      month: { tokens: 6, costMicroUsd: 10 },
    });
    expect(hasBudget({ microUsdPerMonth: 1 })).toBe(true);
    expect(hasBudget({ requestsPerMinute: 5, maxOutputTokens: 10 })).toBe(false);
    expect(hasBudget(undefined)).toBe(false);
  });
});

describe('the week: from Monday 00:00 UTC', () => {
  test('starts on the Monday, whatever the day, and ends seven days later', () => {
    // 2026-11-16 is a Monday; 2026-11-22 the Sunday after.
    expect(weekStart(new Date('2026-11-16T00:00:00Z'))).toBe('2026-11-16');
    expect(weekStart(new Date('2026-11-15T23:59:59.999Z'))).toBe('2026-11-09');
    expect(weekStart(new Date('2026-11-22T23:59:59Z'))).toBe('2026-11-16');
    expect(weekStart(NOW)).toBe('2026-11-16');
    expect(periodEnd('week', NOW)).toBe(Date.parse('2026-11-23T00:00:00Z'));
    expect(periodEnd('week', new Date('2026-11-23T00:00:00Z'))).toBe(Date.parse('2026-11-30T00:00:00Z'));
  });

  test('a week that began last month: read from its Monday, counted apart from the month', () => {
    const wednesday = new Date('2026-12-02T10:00:00Z');
    expect(periodsStart(wednesday)).toBe('2026-11-30');
    expect(periodsStart(NOW)).toBe('2026-11-01');
    const days = [day('2026-11-29', { costMicroUsd: 1 }), day('2026-11-30', { costMicroUsd: 10, inputTokens: 3 }), day('2026-12-01', { costMicroUsd: 100 }), day('2026-12-02', { costMicroUsd: 1000, outputTokens: 4 })];
    expect(usageInPeriods(days, wednesday)).toEqual({
      day: { tokens: 4, costMicroUsd: 1000 },
      week: { tokens: 7, costMicroUsd: 1110 },
      month: { tokens: 4, costMicroUsd: 1100 },
    });
  });
});
