import { fromMessagesUsage, fromResponsesUsage } from '../../../lambda/observability/usage.ts';

describe('fromMessagesUsage', () => {
  test('keeps the 1-hour part of cache writes from cache_creation', () => {
    const usage = fromMessagesUsage({
      input_tokens: 12,
      output_tokens: 1,
      cache_read_input_tokens: 45_000,
      cache_creation_input_tokens: 3_000,
      cache_creation: { ephemeral_5m_input_tokens: 1_000, ephemeral_1h_input_tokens: 2_000 },
    });
    expect(usage).toEqual({ inputTokens: 12, outputTokens: 1, cacheReadTokens: 45_000, cacheWriteTokens: 3_000, cacheWrite1hTokens: 2_000 });
  });

  test('leaves the split out when there are no 1-hour writes or no cache_creation', () => {
    expect(fromMessagesUsage({ input_tokens: 5, output_tokens: 1, cache_creation_input_tokens: 10, cache_creation: { ephemeral_5m_input_tokens: 10, ephemeral_1h_input_tokens: 0 } })).toEqual({
      inputTokens: 5,
      outputTokens: 1,
      cacheReadTokens: 0,
      cacheWriteTokens: 10,
    });
    expect(fromMessagesUsage({ input_tokens: 5, output_tokens: 1 })).not.toHaveProperty('cacheWrite1hTokens');
  });

  test('carries the split from message_start through a message_delta that omits it', () => {
    const start = fromMessagesUsage({ input_tokens: 3, output_tokens: 1, cache_creation_input_tokens: 500, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 500 } });
    expect(fromMessagesUsage({ output_tokens: 80 }, start)).toEqual({ inputTokens: 3, outputTokens: 80, cacheReadTokens: 0, cacheWriteTokens: 500, cacheWrite1hTokens: 500 });
  });

  test('never reports more 1-hour writes than writes', () => {
    expect(fromMessagesUsage({ cache_creation_input_tokens: 100, cache_creation: { ephemeral_1h_input_tokens: 400 } }).cacheWrite1hTokens).toBe(100);
  });

  test('Responses usage has no 1-hour writes', () => {
    expect(fromResponsesUsage({ input_tokens: 100, output_tokens: 5, input_tokens_details: { cached_tokens: 60 } })).toEqual({ inputTokens: 40, outputTokens: 5, cacheReadTokens: 60, cacheWriteTokens: 0 });
  });
});
