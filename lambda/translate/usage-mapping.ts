import type { IrUsage } from './ir.ts';

/**
 * Usage between formats. IR (and Anthropic) input excludes cache reads and writes; OpenAI's
 * input/prompt counts include them.
 * @see docs/wire-formats.md §4.7
 */
export const EMPTY_USAGE: IrUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };

const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
const obj = (value: unknown): Record<string, unknown> => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {});

/** Anthropic usage (message_start / message_delta); absent fields stay absent (cumulative merge). */
export function usageFromMessages(usage: unknown): Partial<IrUsage> {
  const u = obj(usage);
  const partial: Partial<IrUsage> = {};
  const set = (key: keyof IrUsage, value: unknown) => {
    const n = num(value);
    if (n !== undefined) partial[key] = n;
  };
  set('inputTokens', u.input_tokens);
  set('outputTokens', u.output_tokens);
  set('cacheReadTokens', u.cache_read_input_tokens);
  set('cacheWriteTokens', u.cache_creation_input_tokens);
  set('reasoningTokens', obj(u.output_tokens_details).thinking_tokens);
  return partial;
}

function fromOpenAi(input: unknown, cached: unknown, cacheWrite: unknown, output: unknown, reasoning: unknown): IrUsage {
  const read = num(cached) ?? 0;
  const write = num(cacheWrite) ?? 0;
  return {
    inputTokens: Math.max(0, (num(input) ?? 0) - read - write),
    outputTokens: num(output) ?? 0,
    cacheReadTokens: read,
    cacheWriteTokens: write,
    reasoningTokens: num(reasoning) ?? 0,
  };
}

export function usageFromResponses(usage: unknown): IrUsage {
  const u = obj(usage);
  const input = obj(u.input_tokens_details);
  return fromOpenAi(u.input_tokens, input.cached_tokens, input.cache_write_tokens, u.output_tokens, obj(u.output_tokens_details).reasoning_tokens);
}

export function usageFromChat(usage: unknown): IrUsage {
  const u = obj(usage);
  const prompt = obj(u.prompt_tokens_details);
  return fromOpenAi(u.prompt_tokens, prompt.cached_tokens, prompt.cache_write_tokens, u.completion_tokens, obj(u.completion_tokens_details).reasoning_tokens);
}

export function usageToMessages(usage: IrUsage): Record<string, number> {
  return {
    input_tokens: usage.inputTokens,
    cache_creation_input_tokens: usage.cacheWriteTokens,
    cache_read_input_tokens: usage.cacheReadTokens,
    output_tokens: usage.outputTokens,
  };
}

export function usageToResponses(usage: IrUsage): Record<string, unknown> {
  const input = usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.cacheReadTokens },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: input + usage.outputTokens,
  };
}
