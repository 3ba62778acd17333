import { bindingCap, budgetCaps, budgetHeaders } from '../../../lambda/usage/budget-headers.ts';
import { day } from './day-usage.ts';

const NOW = new Date('2026-11-21T22:00:00Z');
const MIDNIGHT = String(Date.parse('2026-11-22T00:00:00Z') / 1000);
const MONTH_END = String(Date.parse('2026-12-01T00:00:00Z') / 1000);
const spent = (costMicroUsd: number, date = '2026-11-21') => [day(date, { costMicroUsd })];

describe('budget headers for Claude Code', () => {
  test('none for a key without budgets', () => {
    expect(budgetHeaders(undefined, [], NOW)).toEqual({});
    expect(budgetHeaders({ requestsPerMinute: 10 }, spent(5), NOW)).toEqual({});
  });

  test('under 75 %: allowed, with utilization and reset', () => {
    expect(budgetHeaders({ microUsdPerDay: 10_000_000 }, spent(4_000_000), NOW)).toEqual({
      'anthropic-ratelimit-unified-status': 'allowed',
      'anthropic-ratelimit-unified-reset': MIDNIGHT,
      'anthropic-ratelimit-unified-overage-reset': MIDNIGHT,
      'anthropic-ratelimit-unified-overage-utilization': '0.4',
      'anthropic-ratelimit-unified-representative-claim': 'overage',
      'anthropic-ratelimit-unified-overage-status': 'allowed',
    });
  });

  test('past 75 % and past 95 %: allowed_warning with the threshold crossed', () => {
    expect(budgetHeaders({ microUsdPerDay: 100 }, spent(75), NOW)['anthropic-ratelimit-unified-status']).toBe('allowed');
    expect(budgetHeaders({ microUsdPerDay: 100 }, spent(76), NOW)).toMatchObject({
      'anthropic-ratelimit-unified-status': 'allowed_warning',
      'anthropic-ratelimit-unified-overage-status': 'allowed_warning',
      'anthropic-ratelimit-unified-overage-surpassed-threshold': '0.75',
      'anthropic-ratelimit-unified-overage-utilization': '0.76',
    });
    expect(budgetHeaders({ microUsdPerDay: 1_000 }, spent(999), NOW)).toMatchObject({
      'anthropic-ratelimit-unified-overage-surpassed-threshold': '0.95',
      'anthropic-ratelimit-unified-overage-utilization': '0.99',
    });
    // 99.9 % rounds to 1.0 but the budget is not spent yet: held at 0.99.
    expect(budgetHeaders({ microUsdPerDay: 10_000 }, spent(9_999), NOW)['anthropic-ratelimit-unified-overage-utilization']).toBe('0.99');
  });

  test('spent exactly: rejected, with the period, the reason and retry-after until the reset', () => {
    expect(budgetHeaders({ microUsdPerMonth: 100 }, spent(100, '2026-11-03'), NOW)).toEqual({
      'anthropic-ratelimit-unified-status': 'rejected',
      'anthropic-ratelimit-unified-reset': MONTH_END,
      'anthropic-ratelimit-unified-overage-reset': MONTH_END,
      'anthropic-ratelimit-unified-overage-utilization': '1',
      'anthropic-ratelimit-unified-overage-surpassed-threshold': '1',
      'anthropic-ratelimit-unified-overage-period': 'monthly',
      'anthropic-ratelimit-unified-overage-disabled-reason': 'org_spend_cap_reached',
      'retry-after': String(9 * 86400 + 2 * 3600),
    });
    expect(budgetHeaders({ microUsdPerDay: 100 }, spent(150), NOW)['anthropic-ratelimit-unified-overage-utilization']).toBe('1.5');
  });

  test('describes the most used budget, or a spent one first (the one resetting last)', () => {
    const days = [day('2026-11-21', { costMicroUsd: 50, inputTokens: 900 }), day('2026-11-02', { costMicroUsd: 40 })];
    const caps = budgetCaps({ microUsdPerDay: 100, microUsdPerMonth: 100, tokensPerDay: 1_000 }, days, NOW);
    expect(caps.map((cap) => [cap.kind, cap.period, cap.used])).toEqual([['usd', 'day', 50], ['usd', 'month', 90], ['tokens', 'day', 900]]);
    expect(bindingCap(caps)).toMatchObject({ kind: 'usd', period: 'month' });
    const bothSpent = budgetCaps({ microUsdPerDay: 50, microUsdPerMonth: 90, tokensPerDay: 100 }, days, NOW);
    expect(bindingCap(bothSpent)).toMatchObject({ kind: 'usd', period: 'month' });
    expect(budgetHeaders({ tokensPerDay: 1_000, microUsdPerMonth: 1_000_000 }, days, NOW)).toMatchObject({ 'anthropic-ratelimit-unified-overage-utilization': '0.9', 'anthropic-ratelimit-unified-reset': MIDNIGHT });
  });
});
