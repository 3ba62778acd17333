/**
 * Token usage in one shape for every format, with one meaning: `inputTokens` are the input
 * tokens that were neither read from nor written to the prompt cache (Anthropic's meaning), so
 * the four input-side counts add up to the whole prompt. OpenAI counts cached tokens inside
 * `input_tokens`; `fromResponsesUsage` subtracts them.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** Anthropic `usage` (message_start, message_delta or a Message). */
export function fromMessagesUsage(usage: Record<string, unknown>, previous?: Usage): Usage {
  // Stream usage is cumulative and message_delta may omit the input side: keep what we had.
  const pick = (key: string, fallback: number): number => (typeof usage[key] === 'number' ? count(usage[key]) : fallback);
  return {
    inputTokens: pick('input_tokens', previous?.inputTokens ?? 0),
    outputTokens: pick('output_tokens', previous?.outputTokens ?? 0),
    cacheReadTokens: pick('cache_read_input_tokens', previous?.cacheReadTokens ?? 0),
    cacheWriteTokens: pick('cache_creation_input_tokens', previous?.cacheWriteTokens ?? 0),
  };
}

/** OpenAI Responses `usage`. */
export function fromResponsesUsage(usage: Record<string, unknown>): Usage {
  const details = (usage.input_tokens_details ?? {}) as Record<string, unknown>;
  const cacheRead = count(details.cached_tokens);
  const cacheWrite = count(details.cache_write_tokens);
  return {
    inputTokens: Math.max(0, count(usage.input_tokens) - cacheRead - cacheWrite),
    outputTokens: count(usage.output_tokens),
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
  };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
