import type { PremiumTier } from '../config/prices.ts';

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
  /**
   * A premium processing tier the provider says served the request, which multiplies every
   * token's price: OpenAI's `service_tier` "priority" (its Fast mode; `fast` in some responses)
   * or "ultrafast", Anthropic's `speed` "fast". Absent for standard processing.
   */
  serviceTier?: PremiumTier;
  /** Anthropic's `inference_geo`: "us" (US-only inference) is priced at 1.1x. */
  inferenceGeo?: string;
  /** Server-side tool calls the provider bills per call, by tool (`web_search`, `web_fetch`, `file_search`...). */
  serverToolCalls?: Record<string, number>;
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
  // https://platform.claude.com/docs/en/build-with-claude/fast-mode: `usage.speed` says which speed served (and is billed).
  const speed = usage.speed ?? (previous?.serviceTier === 'fast' ? 'fast' : undefined);
  if (speed === 'fast') result.serviceTier = 'fast';
  const geo = typeof usage.inference_geo === 'string' ? usage.inference_geo : previous?.inferenceGeo;
  if (geo !== undefined) result.inferenceGeo = geo;
  // `server_tool_use` counts are cumulative, like the token counts: `{web_search_requests: 2, web_fetch_requests: 1}`.
  const tools = isRecord(usage.server_tool_use) ? serverToolCalls(usage.server_tool_use) : previous?.serverToolCalls;
  if (tools !== undefined) result.serverToolCalls = tools;
  return result;
}

function serverToolCalls(counts: Record<string, unknown>): Record<string, number> | undefined {
  const calls: Record<string, number> = {};
  for (const [name, value] of Object.entries(counts)) if (name.endsWith('_requests') && count(value) > 0) calls[name.slice(0, -'_requests'.length)] = count(value);
  return Object.keys(calls).length > 0 ? calls : undefined;
}

/** OpenAI `service_tier` values of a response: "priority" and "fast" are the same tier (Fast mode, formerly Priority processing). */
const OPENAI_TIERS: Readonly<Record<string, PremiumTier>> = { priority: 'priority', fast: 'priority', ultrafast: 'ultrafast' };
/** Output items of hosted tools OpenAI bills per call. */
const OPENAI_TOOL_ITEMS: Readonly<Record<string, string>> = { web_search_call: 'web_search', file_search_call: 'file_search', code_interpreter_call: 'code_interpreter' };

/** A whole OpenAI Responses `response` object: its usage, the tier that served it, its hosted tool calls. */
export function fromResponsesResult(response: Record<string, unknown>): Usage | undefined {
  if (!isRecord(response.usage)) return undefined;
  const result = fromResponsesUsage(response.usage);
  const tier = typeof response.service_tier === 'string' ? OPENAI_TIERS[response.service_tier] : undefined;
  if (tier) result.serviceTier = tier;
  const calls: Record<string, number> = {};
  for (const item of Array.isArray(response.output) ? response.output : []) {
    const tool = isRecord(item) && typeof item.type === 'string' ? OPENAI_TOOL_ITEMS[item.type] : undefined;
    if (tool) calls[tool] = (calls[tool] ?? 0) + 1;
  }
  if (Object.keys(calls).length > 0) result.serverToolCalls = calls;
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
