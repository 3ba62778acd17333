import type * as Http from 'node:http';
import { LightHeaders, LightResponse } from './light-response.ts';

// Not `import http from 'node:http'`: an ES module import of node:http makes Node build the
// module's ES facade, which reads every export, and its lazy WebSocket/MessageEvent getters load
// undici with http2, tls, zlib, worker_threads and assert: 25-30 ms of CPU at import, 3 ms this way.
const http = process.getBuiltinModule('node:http');
const https = process.getBuiltinModule('node:https');

/**
 * The upstream HTTP client: node:http(s) with keep-alive agents, behind the `fetch` signature
 * callUpstream uses (POST, string or byte body, headers, signal; no redirects followed). The built-in fetch (undici) is about a
 * quarter of the gateway's CPU per request; this cuts CPU per request by 19-30% and live heap per
 * open stream by 30% (docs/performance.md) and adds 1 kB to the bundle. The body is still handed
 * on as a web stream, so the relay and the translators are unchanged.
 */
const agents = {
  'http:': new http.Agent({ keepAlive: true }),
  'https:': new https.Agent({ keepAlive: true }),
};

/** Statuses whose Response must have a null body (fetch spec). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export const nodeHttpFetch: typeof fetch = (input, init = {}) =>
  new Promise<Response>((resolve, reject) => {
    const url = new URL(String(input));
    const transport = url.protocol === 'https:' ? https : http;
    const body = typeof init.body === 'string' || init.body instanceof Uint8Array ? init.body : '';
    // A known length lets node:http send head and body in one write (and no chunked upload).
    const headers = { ...(init.headers as Record<string, string>), 'content-length': String(Buffer.byteLength(body)) };
    const agent = agents[url.protocol === 'https:' ? 'https:' : 'http:'];
    const request = transport.request(url, { method: init.method ?? 'GET', headers, agent, signal: init.signal ?? undefined }, (response) => {
      const received = new LightHeaders();
      const raw = response.rawHeaders;
      for (let i = 0; i < raw.length; i += 2) received.append(raw[i] as string, raw[i + 1] as string);
      const status = response.statusCode ?? 502;
      if (NULL_BODY.has(status)) response.resume();
      const stream = NULL_BODY.has(status) ? null : webBody(response);
      resolve(new LightResponse(stream, { status, statusText: response.statusMessage ?? '', headers: received }).asResponse());
    });
    request.on('error', reject);
    request.end(body);
  });

/**
 * The response body as a pull-based web stream. Each pull takes everything node:http has
 * buffered (`read()` joins it), so a burst of small upstream chunks costs one relay step, not
 * one per chunk as Readable.toWeb would; a paced stream still yields each event at once.
 */
function webBody(body: Http.IncomingMessage): ReadableStream<Uint8Array> {
  // Failures surface through `destroyed` on the next pull; an unheard 'error' would crash.
  body.on('error', () => {});
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        return new Promise<void>((resolve, reject) => {
          const settle = (finish: () => void) => {
            body.off('readable', check).off('end', check).off('close', check);
            finish();
          };
          const check = () => {
            const chunk = body.read() as Buffer | null;
            if (chunk !== null) return settle(() => (controller.enqueue(chunk), resolve()));
            if (body.readableEnded) return settle(() => (controller.close(), resolve()));
            // Closed before the end (reset, abort): a failure, as with fetch.
            if (body.destroyed) return settle(() => reject(body.errored ?? new Error('upstream connection closed')));
          };
          body.on('readable', check).on('end', check).on('close', check);
          check();
        });
      },
      cancel(reason) {
        body.destroy(reason instanceof Error ? reason : undefined);
      },
    },
    { highWaterMark: 0 },
  );
}
