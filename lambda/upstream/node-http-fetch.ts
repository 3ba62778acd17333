import type * as Http from 'node:http';
import { LightHeaders, LightResponse } from './light-response.ts';
import type { ChunkReader } from './relay.ts';

// Not `import http from 'node:http'`: an ES module import of node:http makes Node build the
// module's ES facade, which reads every export, and its lazy WebSocket/MessageEvent getters load
// undici with http2, tls, zlib, worker_threads and assert: 25-30 ms of CPU at import, 3 ms this way.
const http = process.getBuiltinModule('node:http');
const https = process.getBuiltinModule('node:https');
const { urlToHttpOptions } = process.getBuiltinModule('node:url');

/**
 * The upstream HTTP client: node:http(s) with keep-alive agents, behind the `fetch` signature
 * callUpstream uses (POST, string or byte body, headers, signal; no redirects followed). The built-in fetch (undici) is about a
 * quarter of the gateway's CPU per request; this cuts CPU per request by 19-30% and live heap per
 * open stream by 30% (docs/performance.md) and adds 1 kB to the bundle. The relay reads the body
 * chunk by chunk straight from node:http (`bodyReaderOf`); a web stream is made only for whoever
 * asks for `body` (a fallback's peek at the first event).
 */
const agents = {
  'http:': new http.Agent({ keepAlive: true }),
  'https:': new https.Agent({ keepAlive: true }),
};

/** Statuses whose Response must have a null body (fetch spec). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export const nodeHttpFetch: typeof fetch = (input, init = {}) =>
  new Promise<Response>((resolve, reject) => {
    const body = typeof init.body === 'string' || init.body instanceof Uint8Array ? init.body : '';
    send(String(input), init.method ?? 'GET', init.headers as Record<string, string>, body, init.signal ?? undefined, reject, (response) => {
      const received = new LightHeaders();
      const raw = response.rawHeaders;
      for (let i = 0; i < raw.length; i += 2) received.append(raw[i] as string, raw[i + 1] as string);
      const status = response.statusCode ?? 502;
      // Failures surface through the reads (`destroyed`, `errored`); an unheard 'error' would crash.
      response.on('error', () => {});
      if (NULL_BODY.has(status)) response.resume();
      const source = NULL_BODY.has(status) ? null : { stream: () => webBody(response), reader: () => bodyReader(response), bytes: () => wholeBody(response) };
      resolve(new LightResponse(source, { status, statusText: response.statusMessage ?? '', headers: received }).asResponse());
    });
  });

function send(input: string, method: string, given: Record<string, string> | undefined, body: string | Uint8Array, signal: AbortSignal | undefined, fail: (error: Error) => void, answered: (response: Http.IncomingMessage) => void): void {
  const target = targetOf(input);
  // A known length lets node:http send head and body in one write (and no chunked upload).
  const headers = { ...given, 'content-length': String(Buffer.byteLength(body)) };
  const request = (target.https ? https : http).request({ ...target.options, method, headers, agent: agents[target.https ? 'https:' : 'http:'] }, answered);
  request.on('error', fail);
  if (signal) abortOn(signal, request);
  request.end(body);
}

/**
 * The request options of an address, parsed once: the gateway calls the same few (its upstreams,
 * the tables, the secret) over and over, and `new URL` with node's conversion costs about 10 us a call.
 */
const targets = new Map<string, { https: boolean; options: Http.RequestOptions }>();

function targetOf(input: string): { https: boolean; options: Http.RequestOptions } {
  let target = targets.get(input);
  if (target === undefined) {
    const url = new URL(input);
    target = { https: url.protocol === 'https:', options: urlToHttpOptions(url) };
    if (targets.size >= 100) targets.clear();
    targets.set(input, target);
  }
  return target;
}

/**
 * What node:http's `signal` option does (destroy the request with an AbortError whose cause is
 * the reason), without its `stream.finished` watcher: a listener, removed when the request closes.
 * Callers read why from the signal's reason (call-upstream.ts), as before.
 */
function abortOn(signal: AbortSignal, request: Http.ClientRequest): void {
  const onAbort = () => request.destroy(Object.assign(new Error('The operation was aborted', { cause: signal.reason }), { name: 'AbortError', code: 'ABORT_ERR' }));
  if (signal.aborted) {
    onAbort();
    return;
  }
  signal.addEventListener('abort', onAbort, { once: true });
  request.once('close', () => signal.removeEventListener('abort', onAbort));
}

/** The whole body, read straight from node:http (no web stream) when nobody asked for the stream. */
function wholeBody(body: Http.IncomingMessage): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    body.on('data', (chunk: Buffer) => chunks.push(chunk));
    body.once('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
    body.once('error', reject);
    // Closed before the end (reset, abort): a failure, as with fetch.
    body.once('close', () => {
      if (!body.complete) reject(body.errored ?? new Error('upstream connection closed'));
    });
  });
}

/**
 * The response body chunk by chunk, straight from node:http (what the relay reads: no web stream
 * per relayed stream). Each read takes everything node:http has buffered (`read()` joins it), so
 * a burst of small upstream chunks costs one relay step, not one per chunk as Readable.toWeb
 * would; a paced stream still yields each event at once.
 */
function bodyReader(body: Http.IncomingMessage): ChunkReader {
  const next = (resolve: (result: Awaited<ReturnType<ChunkReader['read']>>) => void, reject: (error: unknown) => void) => {
    const settle = (finish: () => void) => {
      body.off('readable', check).off('end', check).off('close', check);
      finish();
    };
    const check = () => {
      const chunk = body.read() as Buffer | null;
      if (chunk !== null) return settle(() => resolve({ done: false, value: chunk }));
      if (body.readableEnded) return settle(() => resolve({ done: true, value: undefined }));
      // Closed before the end (reset, abort): a failure, as with fetch.
      if (body.destroyed) return settle(() => reject(body.errored ?? new Error('upstream connection closed')));
    };
    body.on('readable', check).on('end', check).on('close', check);
    check();
  };
  return {
    read: () => new Promise(next),
    cancel: async (reason) => void body.destroy(reason instanceof Error ? reason : undefined),
  };
}

/** The same as a pull-based web stream, for whoever asks for `body` (fallback peeks, translation, tests). */
function webBody(body: Http.IncomingMessage): ReadableStream<Uint8Array> {
  const reader = bodyReader(body);
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const result = await reader.read();
        if (result.done) controller.close();
        else controller.enqueue(result.value);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}
