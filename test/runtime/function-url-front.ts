import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { listen } from '../support/gateway-harness.ts';
import type { Invocation, RuntimeResponse } from './runtime-api.ts';

/**
 * An HTTP front that does what a Lambda Function URL in RESPONSE_STREAM mode does with a
 * request, from AWS's documentation:
 * - the request becomes a payload-2.0 event (cookies in `cookies`, repeated headers joined with
 *   commas, non-text bodies base64): https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html
 * - the function is invoked with response streaming; a body typed
 *   `application/vnd.awslambda.http-integration-response` starts with a JSON prelude
 *   (statusCode, headers, cookies) and 8 NUL bytes, the rest is the HTTP body, streamed on as it
 *   arrives: https://docs.aws.amazon.com/lambda/latest/dg/config-rs-write-functions.html and
 *   https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode-lambda.html
 * - a request payload above the synchronous-invocation quota (6 MB) is refused:
 *   https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html
 * What the documentation does not say, and this front therefore assumes: which content types
 * count as text (not base64); a function error before any byte answers 502 (with the local
 * stand-in's body, so that only the runtimes are compared); an error after the head was sent
 * ends the response without its last chunk; the 413 body for an oversized request. The Function
 * URL's own response headers (x-amzn-RequestId and the like) are not imitated.
 */
export const PRELUDE_CONTENT_TYPE = 'application/vnd.awslambda.http-integration-response';
const PRELUDE_END = Buffer.alloc(8);
const MAX_PAYLOAD_BYTES = 6 * 1024 * 1024;
const TEXT_BODY = /^(text\/|application\/((.+\+)?json|(.+\+)?xml|javascript|x-www-form-urlencoded))/i;

export type Invoke<E = LambdaFunctionURLEvent> = (event: E) => Invocation;
/** What a front makes of a request: the event the function is invoked with. */
export type ToEvent<E> = (req: http.IncomingMessage, body: Buffer) => E;

export async function startFunctionUrlFront(invoke: Invoke): Promise<{ url: string; close(): Promise<void> }> {
  return startStreamingFront(invoke, toEvent);
}

/**
 * A front that invokes the function with the event `toEvent` makes of each request and answers
 * with its streamed response, prelude decoded: a Function URL's, and a REST API's with a streaming
 * Lambda proxy integration (the same output format, per the API Gateway page cited above).
 */
export async function startStreamingFront<E>(invoke: Invoke<E>, eventOf: ToEvent<E>): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => void handle(invoke, eventOf, req, res));
  const url = await listen(server);
  return {
    url,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function handle<E>(invoke: Invoke<E>, eventOf: ToEvent<E>, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const event = eventOf(req, body);
  if (Buffer.byteLength(JSON.stringify(event)) > MAX_PAYLOAD_BYTES) {
    res.writeHead(413, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify({ Message: `Request must be smaller than ${MAX_PAYLOAD_BYTES} bytes for the InvokeFunction operation` }));
  }
  const response = await invoke(event).response;
  await respond(response, res);
}

async function respond(response: RuntimeResponse, res: http.ServerResponse): Promise<void> {
  if (response.mode === 'error') return failed(res);
  if (response.mode === 'buffered') return buffered(response.body, res);
  let prelude: Buffer | undefined = response.contentType === PRELUDE_CONTENT_TYPE ? Buffer.alloc(0) : undefined;
  if (prelude === undefined) res.writeHead(200, { 'content-type': response.contentType });
  for await (const chunk of response.body) {
    if (res.destroyed) break;
    let bytes = chunk as Buffer;
    if (prelude !== undefined) {
      prelude = Buffer.concat([prelude, bytes]);
      const end = prelude.indexOf(PRELUDE_END);
      if (end === -1) continue;
      const { statusCode = 200, headers = {}, cookies = [] } = JSON.parse(prelude.subarray(0, end).toString('utf8'));
      bytes = prelude.subarray(end + PRELUDE_END.length);
      prelude = undefined;
      res.writeHead(statusCode, cookies.length > 0 ? { ...headers, 'set-cookie': cookies } : headers);
      res.flushHeaders();
    }
    if (bytes.length > 0 && !res.write(bytes)) await new Promise((resolve) => res.once('drain', resolve));
  }
  const end = await response.ended;
  if (!res.headersSent) return end.ok ? void res.end() : failed(res);
  // The client sees the error as a response that stops without its terminating chunk.
  if (end.ok) res.end();
  else res.destroy();
}

function failed(res: http.ServerResponse): void {
  res.writeHead(502, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ message: 'Internal Server Error' }));
}

/** A buffered answer: a `statusCode` object is an HTTP response, anything else a JSON body. */
function buffered(payload: Buffer, res: http.ServerResponse): void {
  const value: unknown = JSON.parse(payload.toString('utf8'));
  if (typeof value === 'object' && value !== null && 'statusCode' in value) {
    const { statusCode, headers = {}, body = '', isBase64Encoded = false, cookies = [] } = value as Record<string, any>;
    res.writeHead(statusCode, cookies.length > 0 ? { ...headers, 'set-cookie': cookies } : headers);
    return void res.end(isBase64Encoded ? Buffer.from(body, 'base64') : body);
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(payload);
}

function toEvent(req: http.IncomingMessage, body: Buffer): LambdaFunctionURLEvent {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const headers: Record<string, string> = {};
  let cookies: string[] | undefined;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = (req.rawHeaders[i] as string).toLowerCase();
    const value = req.rawHeaders[i + 1] as string;
    if (name === 'cookie') {
      cookies = [...(cookies ?? []), ...value.split(/;\s*/)];
      continue;
    }
    headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = query[name] === undefined ? value : `${query[name]},${value}`;
  const text = TEXT_BODY.test(headers['content-type'] ?? '');
  const now = new Date();
  const requestId = randomUUID();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    ...(cookies ? { cookies } : {}),
    headers: {
      ...headers,
      'x-amzn-trace-id': `Root=1-${Math.floor(now.getTime() / 1000).toString(16)}-${requestId.replaceAll('-', '').slice(0, 24)}`,
      'x-forwarded-for': req.socket.remoteAddress ?? '',
      'x-forwarded-proto': 'http',
      'x-forwarded-port': String(req.socket.localPort ?? ''),
    },
    queryStringParameters: url.search ? query : undefined,
    requestContext: {
      accountId: 'anonymous',
      apiId: 'runtimetest',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'runtimetest',
      http: { method: req.method ?? 'GET', path: url.pathname, protocol: `HTTP/${req.httpVersion}`, sourceIp: req.socket.remoteAddress ?? '', userAgent: headers['user-agent'] ?? '' },
      requestId,
      routeKey: '$default',
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
    body: body.length === 0 ? undefined : text ? body.toString('utf8') : body.toString('base64'),
    isBase64Encoded: body.length > 0 && !text,
  };
}
