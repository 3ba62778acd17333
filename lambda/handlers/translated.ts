import type { Target } from '../config/routing.ts';
import type { GatewayDeps } from '../deps.ts';
import { GatewayError } from '../errors.ts';
import type { RequestState } from '../request-state.ts';
import type { IrUsage } from '../translate/ir.ts';
import { readUpstreamError, renderClientError, StreamTranslator, translateRequest } from '../translate/translator.ts';
import { streamOrRetry } from '../upstream/first-chunk.ts';
import type { RequestAbort } from '../upstream/request-abort.ts';
import { clientResponseHeaders } from '../upstream/headers.ts';
import { upstreamFormat } from '../upstream/providers.ts';
import { bodyReaderOf, hasBody, readBody } from '../upstream/light-response.ts';
import { relayStream, type ChunkReader, type StreamProcessor } from '../upstream/relay.ts';
import { droppedHeader, type AttemptOutcome } from './attempt.ts';
import { incompleteBodyError, relayHooks, retryableError, retryableStatus, sendToUpstream } from './upstream-exchange.ts';

const encoder = new TextEncoder();

/**
 * One try of a target of another format: the request goes through the IR into the upstream's
 * format (always streaming), and the upstream's stream comes back translated; a non-streaming
 * client gets the accumulated result. What could not be carried is listed in
 * `x-gateway-dropped` and in the log. Failures before any byte reached the client are handed
 * back as `retry` when another target remains (see passthrough.ts).
 */
export async function translatedAttempt(state: RequestState, deps: GatewayDeps, target: Target, clientHeaders: Record<string, string | undefined>, canRetry: boolean): Promise<AttemptOutcome> {
  const { upstream, upstreamModel } = target;
  // Also used between equal formats, to drop reasoning another provider issued (see forward.ts).
  const format = upstreamFormat(upstream);
  const translated = translateRequest(state.family, state.body ?? {}, format, { model: upstreamModel, ...(upstream.maxOutputTokens === undefined ? {} : { maxOutputTokens: upstream.maxOutputTokens }), maxTokensField: upstream.maxTokensField });

  let exchange: Awaited<ReturnType<typeof sendToUpstream>>;
  try {
    exchange = await sendToUpstream(state, deps, target, clientHeaders, {
      operation: 'create',
      body: { text: JSON.stringify(translated.body), parsed: translated.body },
      streaming: true,
      headers: { accept: 'text/event-stream' },
      firstByteTimeoutMs: deps.settings.firstByteTimeoutMs,
    });
  } catch (error) {
    if (canRetry && retryableError(error, state)) return { retry: (error as GatewayError).message, error: error as GatewayError };
    throw error;
  }
  const { response, abort } = exchange;
  const dropped = [...new Set([...translated.dropped, ...exchange.dropped])];
  if (dropped.length > 0) state.dropped = dropped;
  const { 'content-type': _type, ...passed } = clientResponseHeaders(response.headers);
  const headers: Record<string, string> = { ...passed, ...droppedHeader(dropped) };

  if (!response.ok || !hasBody(response)) {
    const text = Buffer.from(await readBody(response).catch(() => new Uint8Array())).toString('utf8');
    const rendered = renderClientError(state.family, readUpstreamError(format, response.status, text), state.id);
    const answer = { statusCode: rendered.status, headers: { ...headers, 'content-type': 'application/json' }, body: rendered.body };
    if (canRetry && retryableStatus(response.status)) return { retry: `status ${response.status}`, status: response.status, answer };
    state.status = rendered.status;
    state.outcome = 'upstream_error';
    return { served: answer };
  }
  // The simulator answers any name; a real upstream's success says the model exists.
  if (upstream.type !== 'simulator') state.modelAccepted = true;

  // Without a fallback nothing is peeked: the upstream client's body is read directly (no web stream).
  let source: ChunkReader;
  if (canRetry) {
    const peeked = await streamOrRetry(response.body as ReadableStream<Uint8Array>, abort, deps.settings.firstByteTimeoutMs);
    if ('retry' in peeked) return peeked;
    source = peeked.stream.getReader();
  } else source = bodyReaderOf(response) as ChunkReader;

  const translator = new StreamTranslator(state.family, format, { model: state.model as string, tools: translated.ir.tools, request: translated.ir });
  const recordUsage = () => {
    // A Responses or Chat upstream reports usage only at the end: none yet means none seen.
    const usage = translator.usage;
    const reported = usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens > 0;
    if (reported) state.usage = toLogUsage(usage);
    // Whole only when the upstream finished on its own and said what it used; else metering estimates.
    state.usageFinal = reported && translator.finished && translator.error === undefined;
    state.outputBytes = translator.outputBytes;
  };
  if (!translated.ir.stream) return collect(state, source, translator, abort, headers, recordUsage, canRetry);

  state.status = 200;
  const body = relayStream(source, translationProcessor(translator), {
    ...relayHooks(state, abort, deps),
    keepaliveMs: deps.settings.keepaliveMs,
    onEnd: (outcome) => {
      recordUsage();
      // Set even when ok: a stream whose terminal event was handed over is delivered, whenever the client leaves.
      state.outcome = outcome === 'ok' && translator.error ? 'upstream_error' : outcome;
    },
  });
  return { served: { statusCode: 200, headers: { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' }, body } };
}

function translationProcessor(translator: StreamTranslator): StreamProcessor {
  const bytes = (text: string) => (text === '' ? undefined : encoder.encode(text));
  return {
    push: (chunk) => bytes(translator.push(chunk)),
    end: () => {
      const finished = translator.finished;
      return { bytes: bytes(translator.end()), outcome: finished ? 'ok' : 'upstream_truncated' };
    },
    fail: (message) => encoder.encode(translator.fail({ category: 'server', message })),
    keepalive: () => bytes(translator.keepalive()),
    get finished() {
      return translator.finished;
    },
  };
}

/** Non-streaming clients: read the whole upstream stream, then answer with the result or a proper error status. */
async function collect(state: RequestState, body: ChunkReader, translator: StreamTranslator, abort: RequestAbort, headers: Record<string, string>, recordUsage: () => void, canRetry: boolean): Promise<AttemptOutcome> {
  try {
    for (;;) {
      const chunk = await body.read();
      if (chunk.done) break;
      translator.push(chunk.value);
      if (translator.finished) {
        // The answer is whole: what the upstream might still send is not waited for.
        void body.cancel().catch(() => {});
        break;
      }
    }
  } catch (error) {
    const failure = incompleteBodyError(error, abort);
    if (canRetry && retryableError(failure, state)) return { retry: failure.message, error: failure };
    throw failure;
  }
  translator.end();
  recordUsage();
  state.firstByteAt = Date.now();
  if (translator.error) {
    const rendered = renderClientError(state.family, translator.error, state.id);
    const answer = { statusCode: rendered.status, headers: { ...headers, 'content-type': 'application/json' }, body: rendered.body };
    // Nothing has reached the client yet: an upstream that failed mid-way may be replaced.
    if (canRetry && retryableStatus(rendered.status)) return { retry: `error in the stream (${rendered.status})`, status: rendered.status, answer };
    state.status = rendered.status;
    state.outcome = 'upstream_error';
    return { served: answer };
  }
  state.status = 200;
  return { served: { statusCode: 200, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(translator.result()) } };
}

function toLogUsage(usage: IrUsage) {
  return { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, cacheReadTokens: usage.cacheReadTokens, cacheWriteTokens: usage.cacheWriteTokens };
}
