import { completePrice } from '../../../lambda/config/prices.ts';
import { PRICE_TABLE } from '../../../lambda/usage/price-table.ts';
import { createPriceBook, DEFAULT_FALLBACK_PRICE, rowPrice } from '../../../lambda/usage/prices.ts';

const book = createPriceBook();
const input = (...models: (string | undefined)[]) => book.lookup(...models).price.inputPerMTok;

describe('the default price table', () => {
  test('prices current Claude and OpenAI models on their own APIs', () => {
    expect(book.lookup('claude-sonnet-5')).toMatchObject({ source: 'table', pattern: 'claude-sonnet-5*', model: 'claude-sonnet-5' });
    expect(rates('claude-sonnet-5')).toEqual([2, 10, 0.2, 2.5, 4]);
    expect(rates('claude-haiku-4-5-20251001')).toEqual([1, 5, 0.1, 1.25, 2]);
    expect(rates('claude-opus-4-1-20250805')).toEqual([15, 75, 1.5, 18.75, 30]);
    expect(input('gpt-5.5')).toBe(5);
    expect(input('gpt-5.4-mini')).toBe(0.75);
  });

  test('keeps a longer model name apart from its prefix (most literal characters win)', () => {
    expect(input('claude-opus-5')).toBe(5);
    expect(input('claude-opus-5-5')).toBe(4);
    expect(input('claude-opus-5-5-20261103')).toBe(4);
    expect(input('eu.anthropic.claude-opus-5-5-v1')).toBe(4.4);
    expect(input('eu.anthropic.claude-opus-5-v1')).toBe(5.5);
  });

  test('prices Bedrock ids: global profiles at list price, in-region and geographic profiles at the regional price', () => {
    expect(input('global.anthropic.claude-sonnet-5-v1:0')).toBe(2);
    expect(input('us.anthropic.claude-sonnet-5-v1:0')).toBe(2.2);
    expect(input('eu.anthropic.claude-sonnet-5-v1:0')).toBe(2.2);
    expect(input('apac.anthropic.claude-sonnet-5-v1:0')).toBe(2.2);
    expect(input('anthropic.claude-sonnet-5-v1:0')).toBe(2.2);
    expect(input('arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-opus-4-6-v1')).toBe(5.5);
    expect(input('arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0')).toBe(1.1);
    expect(input('openai.gpt-5.5')).toBe(5.5);
  });

  test('1-hour cache writes cost 2x input on Claude, 5-minute writes 1.25x (derived where the source lacks them)', () => {
    for (const row of PRICE_TABLE.filter((entry) => entry.id.includes('claude'))) {
      const price = rowPrice(row);
      expect(price.cacheWrite1hPerMTok).toBeCloseTo(price.inputPerMTok * 2, 6);
      expect(price.cacheWritePerMTok).toBeCloseTo(price.inputPerMTok * 1.25, 6);
    }
  });

  test('carries long-context tiers', () => {
    const { price } = book.lookup('claude-sonnet-4-5-20250929');
    expect(price.tiers).toEqual([{ aboveInputTokens: 200_000, inputPerMTok: 6, outputPerMTok: 22.5, cacheReadPerMTok: 0.6, cacheWritePerMTok: 7.5, cacheWrite1hPerMTok: 12 }]);
    expect(book.lookup('gpt-5.5').price.tiers[0]).toMatchObject({ aboveInputTokens: 271_999, inputPerMTok: 10, outputPerMTok: 45 });
  });

  test('matches whatever case the client used', () => {
    expect(book.lookup('Claude-Sonnet-5').source).toBe('table');
  });

});

describe('price lookup', () => {
  test('tries the model the upstream was asked for, then the client name', () => {
    expect(book.lookup('gpt-5.5', 'team-fast')).toMatchObject({ source: 'table', model: 'gpt-5.5' });
    expect(book.lookup('qwen3-coder', 'claude-sonnet-5')).toMatchObject({ source: 'table', model: 'claude-sonnet-5' });
  });

  test('an unknown model gets the fallback price, flagged, never free', () => {
    const match = book.lookup('qwen3-coder', 'team-local');
    expect(match).toEqual({ price: DEFAULT_FALLBACK_PRICE, source: 'fallback', pattern: '*', model: undefined, configuredFallback: false });
    expect(match.price).toMatchObject({ inputPerMTok: 5, outputPerMTok: 25, cacheReadPerMTok: 5, cacheWritePerMTok: 6.25, cacheWrite1hPerMTok: 10 });
    expect(book.lookup(undefined, '').source).toBe('fallback');
  });

  test('config prices override the table, for either name, and "*" sets the fallback', () => {
    const custom = createPriceBook({
      'claude-sonnet-5*': { inputPerMTok: 3, outputPerMTok: 15 },
      'team-fast': { inputPerMTok: 1, outputPerMTok: 2 },
      '*': { inputPerMTok: 0.5, outputPerMTok: 1 },
    });
    expect(custom.lookup('claude-sonnet-5')).toMatchObject({ source: 'config', pattern: 'claude-sonnet-5*' });
    expect(custom.lookup('claude-sonnet-5').price.inputPerMTok).toBe(3);
    // The operator priced the client name: that beats the table's price of the upstream model.
    expect(custom.lookup('gpt-5.5', 'team-fast')).toMatchObject({ source: 'config', model: 'team-fast' });
    expect(custom.lookup('gpt-5.4')).toMatchObject({ source: 'table' });
    expect(custom.lookup('mystery')).toEqual({ price: completePrice({ inputPerMTok: 0.5, outputPerMTok: 1 }), source: 'fallback', pattern: '*', model: undefined, configuredFallback: true });
  });

  test('among config globs the most specific wins, whatever their order', () => {
    const custom = createPriceBook({ 'claude-*': { inputPerMTok: 9, outputPerMTok: 9 }, 'claude-sonnet-*': { inputPerMTok: 1, outputPerMTok: 1 } });
    expect(custom.lookup('claude-sonnet-5').price.inputPerMTok).toBe(1);
    expect(custom.lookup('claude-opus-5').price.inputPerMTok).toBe(9);
  });

  test('answers repeated lookups from its cache with the same result', () => {
    expect(book.lookup('claude-sonnet-5')).toBe(book.lookup('claude-sonnet-5'));
  });
});

function rates(model: string): number[] {
  const { price } = book.lookup(model);
  return [price.inputPerMTok, price.outputPerMTok, price.cacheReadPerMTok, price.cacheWritePerMTok, price.cacheWrite1hPerMTok];
}
