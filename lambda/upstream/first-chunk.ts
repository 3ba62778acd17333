import { FIRST_BYTE_TIMEOUT } from './call-upstream.ts';
import type { RequestAbort } from './request-abort.ts';
import { pullStream } from './relay.ts';

const decoder = new TextDecoder();

export type Peeked = { stream: ReadableStream<Uint8Array>; first: Uint8Array } | { failure: string };

/**
 * The stream to relay, or why another target should be tried instead: a failure before the first
 * chunk, or an upstream error standing in for the first event (its stream is cancelled).
 */
export async function streamOrRetry(body: ReadableStream<Uint8Array>, abort: RequestAbort, timeoutMs: number): Promise<{ stream: ReadableStream<Uint8Array> } | { retry: string }> {
  const peeked = await peekFirstChunk(body, abort, timeoutMs);
  if ('failure' in peeked) return { retry: peeked.failure };
  if (!isEarlyRetryableError(peeked.first)) return { stream: peeked.stream };
  await peeked.stream.cancel().catch(() => {});
  return { retry: 'error event in place of the answer' };
}

/**
 * Reads a stream's first chunk before the answer is committed to the client, so a failure that
 * comes right after the headers (a reset, an empty body, an overload reported as the first event)
 * still counts as "before any byte reached the client" and another target can be tried. The
 * stream handed back yields that chunk, then the rest, pull by pull (no queue).
 */
export async function peekFirstChunk(body: ReadableStream<Uint8Array>, abort: RequestAbort, timeoutMs: number): Promise<Peeked> {
  const reader = body.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  let first: Uint8Array;
  try {
    const result = await Promise.race([reader.read(), timedOut]);
    if (result === 'timeout') {
      // Abort the call (its connection) as well as this read: nothing waits on it any more.
      abort.abort(FIRST_BYTE_TIMEOUT);
      reader.cancel().catch(() => {});
      return { failure: 'no first event in time' };
    }
    if (result.done) return { failure: 'empty stream' };
    first = result.value;
  } catch (error) {
    reader.cancel().catch(() => {});
    return { failure: `reset after headers (${error instanceof Error ? error.message : String(error)})` };
  } finally {
    clearTimeout(timer);
  }
  return { stream: pullStream(reader, first), first };
}

/**
 * Error types an upstream reports as its first event when it cannot serve now (another target
 * may): the in-stream forms of 429, 500, 504 and 529 (Bedrock's exceptions arrive as these).
 */
const RETRYABLE_EARLY = /"(?:type|code)"\s*:\s*"(?:overloaded_error|api_error|rate_limit_error|timeout_error|server_error|server_is_overloaded|rate_limit_exceeded)"/;

/**
 * True when a stream's first chunk is the upstream's own error instead of an answer: Anthropic
 * may answer 200 and then `event: error` (overloaded), OpenAI `response.failed` or `error`.
 */
export function isEarlyRetryableError(first: Uint8Array): boolean {
  const text = decoder.decode(first.subarray(0, 4_096));
  const errorEvent = /^event:\s*error\s*$/m.test(text) || /"type"\s*:\s*"(?:error|response\.failed)"/.test(text);
  return errorEvent && RETRYABLE_EARLY.test(text);
}
