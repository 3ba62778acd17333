import type { GatewayDeps, HandlerResponse } from '../deps.ts';
import type { Upstream } from '../config/routing.ts';
import { GatewayError } from '../errors.ts';
import type { RequestState } from '../request-state.ts';
import type { IrUsage } from '../translate/ir.ts';
import { readUpstreamError, renderClientError, StreamTranslator, translateRequest } from '../translate/translator.ts';
import type { RequestAbort } from '../upstream/request-abort.ts';
import { clientResponseHeaders } from '../upstream/headers.ts';
import { upstreamFormat } from '../upstream/providers.ts';
import { readBody, relayStream, type StreamProcessor } from '../upstream/relay.ts';
import { incompleteBodyError, relayHooks, sendToUpstream } from './upstream-exchange.ts';

const encoder = new TextEncoder();

/**
 * Serves a client from an upstream of another format: the request goes through the IR into the
 * upstream's format (always streaming), and the upstream's stream comes back translated; a
 * non-streaming client gets the accumulated result. What could not be carried is listed in
 * `x-gateway-dropped` and in the log.
 */
export async function forwardTranslated(state: RequestState, deps: GatewayDeps, upstream: Upstream, upstreamModel: string, clientHeaders: Record<string, string | undefined>): Promise<HandlerResponse> {
  if (upstream.type === 'simulator') throw new GatewayError('internal', 'The simulator speaks every client format.');
  // Also used between equal formats, to drop reasoning another provider issued (see forward.ts).
  const format = upstreamFormat(upstream.type);
  const translated = translateRequest(state.family, state.body ?? {}, format, { model: upstreamModel, ...(upstream.maxOutputTokens === undefined ? {} : { maxOutputTokens: upstream.maxOutputTokens }), maxTokensField: upstream.maxTokensField });
  if (translated.dropped.length > 0) state.dropped = translated.dropped;

  const { response, abort } = await sendToUpstream(state, deps, upstream, clientHeaders, {
    operation: 'create',
    body: JSON.stringify(translated.body),
    headers: { accept: 'text/event-stream' },
    firstByteTimeoutMs: deps.settings.firstByteTimeoutMs,
  });
  const { 'content-type': _type, ...passed } = clientResponseHeaders(response.headers);
  const headers: Record<string, string> = translated.dropped.length > 0 ? { ...passed, 'x-gateway-dropped': translated.dropped.join(', ').replace(/[^\x20-\x7e]/g, '?') } : passed;

  if (!response.ok || !response.body) {
    const text = Buffer.from(await readBody(response).catch(() => new Uint8Array())).toString('utf8');
    const rendered = renderClientError(state.family, readUpstreamError(format, response.status, text), state.id);
    state.status = rendered.status;
    state.outcome = 'upstream_error';
    return { statusCode: rendered.status, headers: { ...headers, 'content-type': 'application/json' }, body: rendered.body };
  }

  const translator = new StreamTranslator(state.family, format, { model: state.model as string, tools: translated.ir.tools, request: translated.ir });
  const recordUsage = () => {
    // A Responses or Chat upstream reports usage only at the end: none yet means none seen.
    const usage = translator.usage;
    if (usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens > 0) state.usage = toLogUsage(usage);
    state.outputBytes = translator.outputBytes;
  };
  if (!translated.ir.stream) return collect(state, response.body, translator, abort, headers, recordUsage);

  state.status = 200;
  const body = relayStream(response.body, translationProcessor(translator), {
    ...relayHooks(state, abort, deps),
    keepaliveMs: deps.settings.keepaliveMs,
    onEnd: (outcome) => {
      recordUsage();
      if (outcome !== 'ok') state.outcome = outcome;
      else if (translator.error) state.outcome = 'upstream_error';
    },
  });
  return { statusCode: 200, headers: { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' }, body };
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
async function collect(state: RequestState, body: ReadableStream<Uint8Array>, translator: StreamTranslator, abort: RequestAbort, headers: Record<string, string>, recordUsage: () => void): Promise<HandlerResponse> {
  try {
    for await (const chunk of body) {
      translator.push(chunk);
      if (translator.finished) break;
    }
  } catch (error) {
    throw incompleteBodyError(error, abort);
  }
  translator.end();
  recordUsage();
  state.firstByteAt = Date.now();
  if (translator.error) {
    const rendered = renderClientError(state.family, translator.error, state.id);
    state.status = rendered.status;
    state.outcome = 'upstream_error';
    return { statusCode: rendered.status, headers: { ...headers, 'content-type': 'application/json' }, body: rendered.body };
  }
  state.status = 200;
  return { statusCode: 200, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(translator.result()) };
}

function toLogUsage(usage: IrUsage) {
  return { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, cacheReadTokens: usage.cacheReadTokens, cacheWriteTokens: usage.cacheWriteTokens };
}
