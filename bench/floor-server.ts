import http from 'node:http';
import type { AddressInfo } from 'node:net';
import middy from '@middy/core';
import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';
import { installAwsLambdaGlobal } from '../bin/local/awslambda-shim.ts';
import { createFunctionUrlServer, type StreamingHandler } from '../bin/local/function-url-server.ts';
import { serveParent } from './child-ipc.ts';
import { jsonReply } from './stub-formats.ts';

/**
 * Floors for the gateway, each a child process measured like it:
 * - FLOOR=emulation: the same Function URL emulation with a handler that only answers the stub's
 *   own JSON (no key, no body parsing, no upstream);
 * - FLOOR=middy: the same through middy's streaming pipeline with a string body;
 * - FLOOR=proxy: the simplest Node reverse proxy to the stub (node:http server, keep-alive agent,
 *   `pipe`), no emulation: what relaying a request or an event costs in Node at all.
 * The gateway's own cost is what it adds above them.
 */
const floor = process.env.FLOOR;
const body = jsonReply('messages', 'claude-bench-e0-g0');
const head = { statusCode: 200, headers: { 'content-type': 'application/json' } };

installAwsLambdaGlobal();
const awslambda = (globalThis as unknown as { awslambda: { streamifyResponse<T>(handler: T): T; HttpResponseStream: { from(stream: unknown, prelude: unknown): NodeJS.WritableStream } } }).awslambda;

function handler(): StreamingHandler {
  if (floor === 'emulation') {
    return awslambda.streamifyResponse(async (_event, stream) => {
      const out = awslambda.HttpResponseStream.from(stream, head);
      out.write(body);
      out.end();
    }) as StreamingHandler;
  }
  if (floor === 'middy') {
    return middy({ executionMode: executionModeStreamifyResponse, timeoutEarlyInMillis: 0 }).handler(async () => ({ ...head, body })) as unknown as StreamingHandler;
  }
  throw new Error(`FLOOR must be emulation, middy or proxy, got "${floor}"`);
}

/** `/first/v1/messages` -> `/v1/messages`, `/second/v1/responses` -> `/v1/responses`. */
function proxyTo(stubUrl: string): http.Server {
  const agent = new http.Agent({ keepAlive: true });
  return http.createServer((req, res) => {
    const upstream = http.request(`${stubUrl}${(req.url ?? '').replace(/^\/(first|second)/, '')}`, { method: req.method, headers: req.headers, agent }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
}

const server = floor === 'proxy' ? proxyTo(process.env.BENCH_STUB_URL ?? '') : createFunctionUrlServer(handler(), { maxBodyBytes: 32 * 1024 * 1024, functionTimeoutMs: 900_000 });
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ type: 'ready', url: `http://127.0.0.1:${port}` });
});
serveParent();
