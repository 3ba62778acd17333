/**
 * Local token estimate for upstreams that cannot count (everything but Anthropic's
 * `count_tokens`). It counts one token per 3 UTF-8 bytes of the request's JSON, which lands
 * above real tokenizers for English prose and code (about 4 bytes per token) on purpose:
 * clients use the count to decide when to compact, and compacting a little early is harmless
 * while compacting too late overflows the context window.
 */
export const BYTES_PER_TOKEN = 3;

export function estimateTokens(parts: readonly unknown[]): number {
  let bytes = 0;
  for (const part of parts) {
    if (part === undefined || part === null) continue;
    bytes += Buffer.byteLength(typeof part === 'string' ? part : JSON.stringify(part), 'utf8');
  }
  return Math.ceil(bytes / BYTES_PER_TOKEN);
}
