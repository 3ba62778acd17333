import { isUtf8 } from 'node:buffer';
import { GatewayError } from '../errors.ts';
import type { GatewayDeps, HandlerResponse } from '../deps.ts';
import type { RequestState } from '../request-state.ts';
import { replaceTopLevelString, parseJsonObject } from '../formats/json-fields.ts';
import { MessagesStreamObserver } from '../formats/messages/stream-observer.ts';
import { modelNameRestorer } from '../formats/model-name.ts';
import { ResponsesStreamObserver } from '../formats/responses/stream-observer.ts';
import { fromMessagesUsage, fromResponsesUsage, isRecord } from '../observability/usage.ts';
import { requestAbort, type RequestAbort } from '../upstream/request-abort.ts';
import { clientResponseHeaders } from '../upstream/headers.ts';
import { servesOperation, speaksFamily, type Operation } from '../upstream/providers.ts';
import { bytesStream, PassthroughProcessor, readBody, relayStream } from '../upstream/relay.ts';
import { incompleteBodyError, relayHooks, sendToUpstream } from './upstream-exchange.ts';
import { simulate } from '../upstream/simulator/simulator.ts';
import { countTokensLocally } from './count-tokens.ts';
import { forwardTranslated } from './translated.ts';

/**
 * Sends a validated request to the upstream its model routes to and relays the answer.
 * Same format: the body goes out byte-for-byte (bar a model rename) and the upstream's status,
 * body and relevant headers come back unmodified. Other formats go through the translator.
 */
export async function forward(state: RequestState, deps: GatewayDeps, operation: Operation, clientHeaders: Record<string, string | undefined>): Promise<HandlerResponse> {
  const model = state.model as string;
  const match = deps.router.select(model);
  if (!match) throw new GatewayError('not_found', `No route for model "${model}".`, { code: 'model_not_found', param: 'model' });
  const { upstream, upstreamModel } = match;
  state.upstream = upstream.name;
  state.upstreamModel = upstreamModel;
  if (!servesOperation(upstream.type, operation)) {
    if (operation !== 'compact') return countTokensLocally(state);
    throw new GatewayError('not_implemented', `Remote compaction (/responses/compact) is served by OpenAI upstreams only; "${model}" routes to a ${upstream.type} upstream. Codex compacts locally with a custom provider.`);
  }
  if (operation === 'create' && (!speaksFamily(upstream.type, state.family) || carriesForeignReasoning(upstream.type, state.rawBody as string))) {
    return forwardTranslated(state, deps, upstream, upstreamModel, clientHeaders);
  }

  const body = upstreamModel === model ? (state.rawBody as string) : replaceTopLevelString(state.rawBody as string, 'model', upstreamModel);
  const streaming = state.body?.stream === true;
  let response: Response;
  let abort: RequestAbort;
  if (upstream.type === 'simulator') {
    abort = requestAbort(state.deadline, state.abandon);
    state.release.push(abort.release);
    const parsed = upstreamModel === model ? (state.body as Record<string, unknown>) : { ...state.body, model: upstreamModel };
    response = simulate(state.family, parsed, upstream.delayMs, abort.signal);
  } else {
    ({ response, abort } = await sendToUpstream(state, deps, upstream, clientHeaders, { operation, body, firstByteTimeoutMs: streaming ? deps.settings.firstByteTimeoutMs : undefined }));
  }

  const headers = clientResponseHeaders(response.headers);
  state.status = response.status;
  const eventStream = response.headers.get('content-type')?.startsWith('text/event-stream') === true;
  if (response.ok && eventStream && response.body) {
    const observer = state.family === 'messages' ? new MessagesStreamObserver() : new ResponsesStreamObserver(`resp_${state.id}`);
    const restore = upstreamModel === model ? undefined : modelNameRestorer(state.family, model);
    const relayed = relayStream(response.body, new PassthroughProcessor(observer, restore), {
      ...relayHooks(state, abort, deps),
      onEnd: (outcome) => {
        state.usage = observer.usage;
        state.outputBytes = observer.outputBytes;
        if (outcome !== 'ok') state.outcome = outcome;
      },
    });
    return { statusCode: response.status, headers: { ...headers, 'cache-control': 'no-cache' }, body: relayed };
  }

  const bytes = await readBody(response).catch((error: unknown) => {
    throw incompleteBodyError(error, abort);
  });
  if (response.ok) recordUsage(state, bytes);
  state.firstByteAt = Date.now();
  const answer = response.ok && upstreamModel !== model ? restoreModelInJson(bytes, model) : bytes;
  return { statusCode: response.status, headers, body: replyBody(answer) };
}

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

/**
 * A conversation that switched routes carries reasoning another provider issued, packed by the
 * translator (`gw1.`). Forwarded as is, the provider would reject it (400), so such requests go
 * through the same-format translation, which keeps only the provider's own reasoning.
 */
function carriesForeignReasoning(type: string, rawBody: string): boolean {
  return type !== 'simulator' && rawBody.includes('"gw1.');
}

/** A JSON answer names the client's model (see model-name.ts); every other byte stays. */
function restoreModelInJson(bytes: Uint8Array, model: string): Uint8Array {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  return parseJsonObject(text) ? Buffer.from(replaceTopLevelString(text, 'model', model)) : bytes;
}

function recordUsage(state: RequestState, bytes: Uint8Array): void {
  const usage = parseJsonObject(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'))?.usage;
  if (!isRecord(usage)) return;
  state.usage = state.family === 'messages' ? fromMessagesUsage(usage) : fromResponsesUsage(usage);
}

