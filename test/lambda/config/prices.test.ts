import { completePrice, parsePricesConfig, PricesConfigSchema } from '../../../lambda/config/prices.ts';

describe('prices config', () => {
  test('accepts globs with rates and tiers', () => {
    const config = { 'team-*': { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, tiers: [{ aboveInputTokens: 200_000, inputPerMTok: 6 }] }, '*': { inputPerMTok: 5, outputPerMTok: 25 } };
    expect(parsePricesConfig(config)).toEqual(config);
  });

  test('refuses mistakes with one line per field', () => {
    expect(() =>
      parsePricesConfig({ 'a*': { inputPerMTok: -1, outputPerMTok: 1 }, b: { inputPerMTok: 1 }, c: { inputPerMTok: 1, outputPerMTok: 1, cachePerMTok: 1 }, d: { inputPerMTok: '3', outputPerMTok: 1, tiers: [{ aboveInputTokens: 1.5 }] } }),
    ).toThrow(
      [
        'Invalid prices:',
        '  - prices.a*.inputPerMTok: must be at least 0',
        '  - prices.b.outputPerMTok: required',
        '  - prices.c: unknown field(s) "cachePerMTok"',
        '  - prices.d.inputPerMTok: must be a number',
        '  - prices.d.tiers.0.aboveInputTokens: must be a whole number',
      ].join('\n'),
    );
    expect(() => parsePricesConfig({ a: { inputPerMTok: 1, outputPerMTok: 1, tiers: [{ aboveInputTokens: 10 }, { aboveInputTokens: 10 }] } })).toThrow('each tier needs its own aboveInputTokens');
    expect(PricesConfigSchema.safeParse({ '': { inputPerMTok: 1, outputPerMTok: 1 } }).success).toBe(false);
  });

  test('fills omitted cache rates so that no write is under-billed, and tiers inherit the base', () => {
    expect(completePrice({ inputPerMTok: 4, outputPerMTok: 20, tiers: [{ aboveInputTokens: 100, outputPerMTok: 30 }, { aboveInputTokens: 10, inputPerMTok: 5 }] })).toEqual({
      inputPerMTok: 4,
      outputPerMTok: 20,
      cacheReadPerMTok: 4,
      cacheWritePerMTok: 5,
      cacheWrite1hPerMTok: 8,
      tiers: [
        { aboveInputTokens: 10, inputPerMTok: 5, outputPerMTok: 20, cacheReadPerMTok: 4, cacheWritePerMTok: 5, cacheWrite1hPerMTok: 8 },
        { aboveInputTokens: 100, inputPerMTok: 4, outputPerMTok: 30, cacheReadPerMTok: 4, cacheWritePerMTok: 5, cacheWrite1hPerMTok: 8 },
      ],
    });
  });
});
