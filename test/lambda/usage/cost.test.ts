import { completePrice } from '../../../lambda/config/prices.ts';
import type { Usage } from '../../../lambda/observability/usage.ts';
import { costMicroUsd, formatUsd, promptTokens } from '../../../lambda/usage/cost.ts';
import { createPriceBook } from '../../../lambda/usage/prices.ts';

// Prices in USD per million tokens are micro-dollars per token: every expected value below is
// tokens x rate, worked out by hand.
const SONNET_LONG = completePrice({
  inputPerMTok: 3,
  outputPerMTok: 15,
  cacheReadPerMTok: 0.3,
  cacheWritePerMTok: 3.75,
  cacheWrite1hPerMTok: 6,
  tiers: [{ aboveInputTokens: 200_000, inputPerMTok: 6, outputPerMTok: 22.5, cacheReadPerMTok: 0.6, cacheWritePerMTok: 7.5, cacheWrite1hPerMTok: 12 }],
});

const usage = (fields: Partial<Usage>): Usage => ({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, ...fields });

describe('costMicroUsd', () => {
  test.each([
    ['uncached input', { inputTokens: 1_000 }, 3_000],
    ['output', { outputTokens: 1_000 }, 15_000],
    ['cache reads', { cacheReadTokens: 1_000 }, 300],
    ['5-minute cache writes', { cacheWriteTokens: 1_000 }, 3_750],
    ['1-hour cache writes', { cacheWriteTokens: 1_000, cacheWrite1hTokens: 1_000 }, 6_000],
    ['writes of both lifetimes: 600 x 3.75 + 400 x 6', { cacheWriteTokens: 1_000, cacheWrite1hTokens: 400 }, 4_650],
    ['every kind: 100x3 + 200x15 + 1000x0.3 + 400x3.75 + 100x6', { inputTokens: 100, outputTokens: 200, cacheReadTokens: 1_000, cacheWriteTokens: 500, cacheWrite1hTokens: 100 }, 5_700],
  ])('%s', (_name, fields, expected) => {
    expect(costMicroUsd(usage(fields), SONNET_LONG)).toBe(expected);
  });

  test('a prompt of exactly the threshold is priced at the base rates, one token more at the tier for the whole request', () => {
    expect(costMicroUsd(usage({ inputTokens: 200_000, outputTokens: 1_000 }), SONNET_LONG)).toBe(200_000 * 3 + 1_000 * 15);
    expect(costMicroUsd(usage({ inputTokens: 200_001, outputTokens: 1_000 }), SONNET_LONG)).toBe(200_001 * 6 + 1_000 * 22.5);
  });

  test('cache reads and writes count towards the tier threshold and are priced at the tier', () => {
    const request = usage({ inputTokens: 1, cacheReadTokens: 150_000, cacheWriteTokens: 50_000, cacheWrite1hTokens: 10_000, outputTokens: 10 });
    expect(promptTokens(request)).toBe(200_001);
    expect(costMicroUsd(request, SONNET_LONG)).toBe(6 + 150_000 * 0.6 + 40_000 * 7.5 + 10_000 * 12 + 10 * 22.5);
  });

  test('rounds once per request, half up to the micro-dollar', () => {
    const cheap = completePrice({ inputPerMTok: 0.3, outputPerMTok: 2.5, cacheReadPerMTok: 0.2 });
    expect(costMicroUsd(usage({ inputTokens: 1 }), cheap)).toBe(0); // 0.3
    expect(costMicroUsd(usage({ inputTokens: 5 }), cheap)).toBe(2); // 1.5 -> 2
    expect(costMicroUsd(usage({ outputTokens: 1 }), cheap)).toBe(3); // 2.5 -> 3
    expect(costMicroUsd(usage({ inputTokens: 1, cacheReadTokens: 1 }), cheap)).toBe(1); // 0.3 + 0.2 = 0.5 -> 1, not 0 + 0
    // 0.1 + 0.2 is not 0.3 in floating point; the integer arithmetic does not drift.
    expect(costMicroUsd(usage({ inputTokens: 10_000_000 }), completePrice({ inputPerMTok: 0.1 + 0.2, outputPerMTok: 0 }))).toBe(3_000_000);
  });

  test('large requests stay exact (beyond 2^53 in the intermediate sum)', () => {
    const pricey = completePrice({ inputPerMTok: 150, outputPerMTok: 9_999.999999 });
    // 3e6 tokens x 9,999,999,999 (the rate in 1e-6 units) = 3e16 > 2^53
    expect(costMicroUsd(usage({ inputTokens: 10_000_000, outputTokens: 3_000_000 }), pricey)).toBe(1_500_000_000 + 29_999_999_997);
  });

  test('a 1-hour count above the write total is clamped to it (never billed twice)', () => {
    expect(costMicroUsd(usage({ cacheWriteTokens: 100, cacheWrite1hTokens: 500 }), SONNET_LONG)).toBe(600);
  });

  test('a Claude Code turn on claude-sonnet-5 at the default table price', () => {
    const { price, source } = createPriceBook().lookup('claude-sonnet-5');
    expect(source).toBe('table');
    // 12 x 2 + 850 x 10 + 45,000 x 0.2 + 3,000 x 4 (1-hour writes)
    expect(costMicroUsd(usage({ inputTokens: 12, outputTokens: 850, cacheReadTokens: 45_000, cacheWriteTokens: 3_000, cacheWrite1hTokens: 3_000 }), price)).toBe(29_524);
  });

  test('formats micro-dollars to six decimals', () => {
    expect(formatUsd(29_524)).toBe('$0.029524');
    expect(formatUsd(12_345_678_901)).toBe('$12345.678901');
  });
});
