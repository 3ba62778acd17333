import { ConnectionPool } from '../http1/connection-pool.ts';
import { headerPairs } from '../http1/answer-head.ts';
import type { Exchange } from '../http1/exchange.ts';
import { LightHeaders, LightResponse } from './light-response.ts';
import { pullStream, type ChunkReader } from './relay.ts';

/**
 * The upstream HTTP client behind the `fetch` signature callUpstream uses (a string or byte
 * body, headers, a signal; no redirects followed), on the gateway's own HTTP/1.1 client
 * (http1/connection-pool.ts). Node's fetch (undici) was about a quarter of the gateway's CPU per
 * request and node:http a fifth (docs/performance.md). The relay reads the body piece by piece
 * straight from the socket's exchange (`bodyReaderOf`); a web stream is made only for whoever
 * asks for `body` (a fallback's peek at the first event, translation).
 */

/**
 * No bound on sockets: every open stream holds one for its whole length, and a queued stream
 * would wait minutes (npm start bounds its connections at the door, Lambda runs one request per
 * environment). Idle ones kept: as many as node:http's agent kept.
 */
const pool = new ConnectionPool({ maxSockets: Infinity, maxIdle: 256 });

/** A non-streamed answer the gateway reads whole (a JSON answer, an error) is refused past this. */
const MAX_WHOLE_BYTES = 32 * 1024 * 1024;

/** Statuses whose Response must have a null body (fetch spec). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export const upstreamFetch: typeof fetch = async (input, init = {}) => {
  const body = typeof init.body === 'string' || init.body instanceof Uint8Array ? init.body : '';
  const { signal } = init;
  if (signal?.aborted) throw abortError(signal);
  const exchange = pool.send(String(input), init.method ?? 'GET', (init.headers ?? {}) as Record<string, string>, body);
  if (signal) abortOn(signal, exchange);
  const head = await exchange.head();
  const headers = new LightHeaders(headerPairs(head));
  const source = NULL_BODY.has(head.status) ? null : { stream: () => pullStream(exchange), reader: (): ChunkReader => exchange, bytes: async () => (await exchange.whole(MAX_WHOLE_BYTES)).body };
  if (source === null) void exchange.cancel();
  return new LightResponse(source, { status: head.status, statusText: head.statusText, headers }).asResponse();
};

/** One connection to the address's origin opened ahead of the first call (Lambda's Init: handler.ts); never fails. */
export function preconnectUpstream(url: string): Promise<void> {
  try {
    return pool.preconnect(url);
  } catch {
    return Promise.resolve();
  }
}

/** Every idle upstream socket closed (tests: idle sockets are unref'd and hold no process open). */
export function closeIdleUpstreamSockets(): void {
  pool.closeIdle();
}

/** The AbortError fetch rejects with, its cause the signal's reason (callers read why from the signal: call-upstream.ts). */
function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error('The operation was aborted', { cause: signal.reason }), { name: 'AbortError', code: 'ABORT_ERR' });
}

/** An abort fails the call and closes its socket, until the answer is complete; the listener goes when the exchange settles. */
function abortOn(signal: AbortSignal, exchange: Exchange): void {
  const onAbort = () => exchange.abort(abortError(signal));
  signal.addEventListener('abort', onAbort, { once: true });
  exchange.onSettled(() => signal.removeEventListener('abort', onAbort));
}

