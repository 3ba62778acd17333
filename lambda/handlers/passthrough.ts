import { isUtf8 } from 'node:buffer';
import type { Target } from '../config/routing.ts';
import type { GatewayDeps } from '../deps.ts';
import type { GatewayError } from '../errors.ts';
import { parseJsonObject, replaceTopLevelString } from '../formats/json-fields.ts';
import type { CleanedRequest } from '../formats/cleaned-request.ts';
import { MessagesStreamObserver } from '../formats/messages/stream-observer.ts';
import { modelNameRestorer } from '../formats/model-name.ts';
import { ResponsesStreamObserver } from '../formats/responses/stream-observer.ts';
import { fromMessagesUsage, fromResponsesResult, isRecord } from '../observability/usage.ts';
import type { RequestState } from '../request-state.ts';
import { streamOrRetry } from '../upstream/first-chunk.ts';
import { clientResponseHeaders } from '../upstream/headers.ts';
import type { Operation } from '../upstream/providers.ts';
import { bodyReaderOf, readBody } from '../upstream/light-response.ts';
import { bytesStream, PassthroughProcessor, relayStream } from '../upstream/relay.ts';
import { requestAbort, type RequestAbort } from '../upstream/request-abort.ts';
import { simulate } from '../upstream/simulator/simulator.ts';
import { droppedHeader, type AttemptOutcome } from './attempt.ts';
import { incompleteBodyError, relayHooks, retryableError, retryableStatus, sendToUpstream } from './upstream-exchange.ts';

/**
 * One try of a target that speaks the client's format: the body goes out byte-for-byte (bar a
 * model rename) and the upstream's status, body and relevant headers come back unmodified.
 * When another target remains (`canRetry`), a failure before any byte reached the client is
 * handed back as `retry`: a retryable status, no connection, no headers in time, or, for
 * streams, a reset or an error event in place of the first event. Otherwise nothing is peeked:
 * a route without fallbacks behaves exactly as a plain relay.
 */
export async function passthroughAttempt(
  state: RequestState,
  deps: GatewayDeps,
  target: Target,
  operation: Operation,
  clientHeaders: Record<string, string | undefined>,
  canRetry: boolean,
  /** The request with what this target cannot take removed (foreign reasoning), instead of the client's bytes. */
  cleaned?: CleanedRequest,
): Promise<AttemptOutcome> {
  const model = state.model as string;
  const { upstream, upstreamModel } = target;
  const streaming = state.body?.stream === true;
  let response: Response;
  let abort: RequestAbort;
  let dropped: string[] = [];
  if (upstream.type === 'simulator') {
    abort = requestAbort(state.deadline, state.abandon);
    state.release.push(abort.release);
    const parsed = upstreamModel === model ? (state.body as Record<string, unknown>) : { ...state.body, model: upstreamModel };
    response = simulate(state.family, parsed, upstream.delayMs, abort.signal);
  } else {
    const raw = cleaned?.body ?? (state.rawBody as string);
    const body = upstreamModel === model ? raw : replaceTopLevelString(raw, 'model', upstreamModel);
    try {
      ({ response, abort, dropped } = await sendToUpstream(state, deps, target, clientHeaders, { operation, body: { text: body, parsed: state.body ?? {} }, streaming, firstByteTimeoutMs: streaming ? deps.settings.firstByteTimeoutMs : undefined }));
      if (cleaned) dropped = [...cleaned.dropped, ...dropped];
    } catch (error) {
      if (canRetry && retryableError(error, state)) return { retry: (error as GatewayError).message, error: error as GatewayError };
      throw error;
    }
  }
  if (dropped.length > 0) state.dropped = dropped;
  const headers = { ...clientResponseHeaders(response.headers), ...droppedHeader(dropped) };
  if (canRetry && retryableStatus(response.status)) {
    const bytes = await readBody(response).catch(() => new Uint8Array());
    return { retry: `status ${response.status}`, status: response.status, answer: { statusCode: response.status, headers, body: replyBody(bytes) } };
  }

  state.status = response.status;
  // The simulator answers any name; a real upstream's success says the model exists.
  if (response.ok && upstream.type !== 'simulator') state.modelAccepted = true;
  const eventStream = response.headers.get('content-type')?.startsWith('text/event-stream') === true;
  // Without a fallback nothing is peeked: the relay reads the upstream client's body directly (no web stream).
  const source = response.ok && eventStream ? (canRetry ? response.body : bodyReaderOf(response)) : null;
  if (source) {
    let relayed = source;
    if (canRetry) {
      const peeked = await streamOrRetry(source as ReadableStream<Uint8Array>, abort, deps.settings.firstByteTimeoutMs);
      if ('retry' in peeked) return peeked;
      relayed = peeked.stream;
    }
    const observer = state.family === 'messages' ? new MessagesStreamObserver() : new ResponsesStreamObserver(`resp_${state.id}`);
    const restore = upstreamModel === model ? undefined : modelNameRestorer(state.family, model);
    // Bedrock sends no pings; Claude Code gives up on a stream after 300 s without a byte.
    const pings = upstream.type === 'bedrock' ? { keepalive: () => PING, keepaliveMs: deps.settings.keepaliveMs } : undefined;
    const body = relayStream(relayed, new PassthroughProcessor(observer, restore, pings?.keepalive), {
      ...relayHooks(state, abort, deps),
      ...(pings ? { keepaliveMs: pings.keepaliveMs } : {}),
      onEnd: (outcome) => {
        state.usage = observer.usage;
        state.usageFinal = observer.usageFinal;
        state.outputBytes = observer.outputBytes;
        // Set even when ok: a stream whose terminal event was handed over is delivered, whenever the client leaves.
        state.outcome = outcome;
      },
    });
    return { served: { statusCode: response.status, headers: { ...headers, 'cache-control': 'no-cache' }, body } };
  }

  let bytes: Uint8Array;
  try {
    bytes = await readBody(response);
  } catch (error) {
    const failure = incompleteBodyError(error, abort);
    if (canRetry && retryableError(failure, state)) return { retry: failure.message, error: failure };
    throw failure;
  }
  if (response.ok) recordUsage(state, bytes);
  state.firstByteAt = Date.now();
  const answer = response.ok && upstreamModel !== model ? restoreModelInJson(bytes, model) : bytes;
  return { served: { statusCode: response.status, headers, body: replyBody(answer) } };
}

/** Anthropic's own keepalive event. */
const PING = new TextEncoder().encode('event: ping\ndata: {"type":"ping"}\n\n');

/** middy writes a string body without slicing it only up to this many UTF-16 units (#1189). */
const ONE_WRITE_CHARS = 16_384;

/**
 * A whole answer as the handler body. middy writes a string straight to the response stream,
 * while a stream body costs a web ReadableStream and a stream.pipeline per answer (about a
 * tenth of the request's CPU, bench/). A string only when it encodes back to the very same
 * bytes (valid UTF-8) and middy will not slice it (it cuts at 16,384 UTF-16 units, which could
 * split a surrogate pair).
 */
function replyBody(bytes: Uint8Array): string | ReadableStream<Uint8Array> {
  if (bytes.byteLength > ONE_WRITE_CHARS || !isUtf8(bytes)) return bytesStream(bytes);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/** A JSON answer names the client's model (see model-name.ts); every other byte stays. */
function restoreModelInJson(bytes: Uint8Array, model: string): Uint8Array {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  return parseJsonObject(text) ? Buffer.from(replaceTopLevelString(text, 'model', model)) : bytes;
}

function recordUsage(state: RequestState, bytes: Uint8Array): void {
  const answer = parseJsonObject(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  const usage = answer === undefined ? undefined : state.family === 'messages' ? (isRecord(answer.usage) ? fromMessagesUsage(answer.usage) : undefined) : fromResponsesResult(answer);
  if (!usage) return;
  state.usage = usage;
  state.usageFinal = true;
}
