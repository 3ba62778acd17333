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
  /**
   * The part of `cacheWriteTokens` written with a 1-hour lifetime (Anthropic bills it at 2x
   * input, against 1.25x for 5-minute writes). Absent when the upstream does not say.
   */
  cacheWrite1hTokens?: number;
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** Anthropic `usage` (message_start, message_delta or a Message). */
export function fromMessagesUsage(usage: Record<string, unknown>, previous?: Usage): Usage {
  // Stream usage is cumulative and message_delta may omit the input side: keep what we had.
  const pick = (key: string, fallback: number): number => (typeof usage[key] === 'number' ? count(usage[key]) : fallback);
  const result: Usage = {
    inputTokens: pick('input_tokens', previous?.inputTokens ?? 0),
    outputTokens: pick('output_tokens', previous?.outputTokens ?? 0),
    cacheReadTokens: pick('cache_read_input_tokens', previous?.cacheReadTokens ?? 0),
    cacheWriteTokens: pick('cache_creation_input_tokens', previous?.cacheWriteTokens ?? 0),
  };
  // `cache_creation` splits the writes by lifetime; only the 1-hour part is priced differently.
  const creation = usage.cache_creation;
  const write1h = isRecord(creation) && typeof creation.ephemeral_1h_input_tokens === 'number' ? count(creation.ephemeral_1h_input_tokens) : previous?.cacheWrite1hTokens;
  if (write1h) result.cacheWrite1hTokens = Math.min(write1h, result.cacheWriteTokens);
  return result;
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
