import { buildRows } from '../../bin/generate-prices.ts';
import { PRICE_SOURCE, PRICE_TABLE } from '../../lambda/usage/price-table.ts';

describe('npm run prices', () => {
  test('is what npm run prices generates from the pinned source', () => {
    expect(PRICE_SOURCE).toMatchObject({ name: '@pydantic/genai-prices', licence: 'MIT' });
    expect(JSON.parse(JSON.stringify(buildRows(new Date(PRICE_SOURCE.pricesInForceOn))))).toEqual(JSON.parse(JSON.stringify(PRICE_TABLE)));
  });

  test('keeps the table small: current Claude and OpenAI models and their Bedrock ids only', () => {
    const ids = PRICE_TABLE.map((row) => row.id);
    expect(ids.length).toBeLessThan(100);
    expect(ids.every((id) => /claude|gpt|^o\d/.test(id))).toBe(true);
    expect(ids.some((id) => /claude-3|gpt-4o|gpt-oss|nova/.test(id))).toBe(false);
  });
});
