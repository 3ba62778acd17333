import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Context, LambdaFunctionURLEvent } from 'aws-lambda';
import { LocalResponseStream, PRELUDE_CONTENT_TYPE } from './awslambda-shim.ts';

export type StreamingHandler = (event: LambdaFunctionURLEvent, stream: LocalResponseStream, context: Context) => Promise<unknown>;

export interface FunctionUrlServerOptions {
  /** Bodies larger than this are cut at limit + 1 byte: enough for the handler to answer 413. */
  maxBodyBytes: number;
  /** What `context.getRemainingTimeInMillis()` counts down from. */
  functionTimeoutMs: number;
}

const TEXT_BODY = /^(application\/(.+\+)?json|text\/)/i;
const PRELUDE_END = Buffer.alloc(8);

/**
 * A node:http server that does what a Lambda Function URL in RESPONSE_STREAM mode does: turn
 * each request into a payload-2.0 event, invoke the streaming handler, decode the prelude into
 * status and headers, and stream the body on as it is written. A client that disconnects
 * destroys the response stream, which cancels the handler's body (and so the upstream call).
 */
export function createFunctionUrlServer(handler: StreamingHandler, options: FunctionUrlServerOptions): http.Server {
  const server = http.createServer((req, res) => void invoke(handler, options, req, res));
  // A WebSocket upgrade is answered by the handler like any request (it says 426).
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex) => {
    const res = new http.ServerResponse(req);
    res.assignSocket(socket as import('node:net').Socket);
    res.shouldKeepAlive = false;
    res.on('finish', () => socket.end());
    void invoke(handler, options, req, res);
  });
  return server;
}

async function invoke(handler: StreamingHandler, options: FunctionUrlServerOptions, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const body = await readBody(req, options.maxBodyBytes);
  const startedAt = Date.now();
  const event = toEvent(req, body);
  const context = toContext(event.requestContext.requestId, startedAt + options.functionTimeoutMs);
  let prelude: Buffer | undefined = Buffer.alloc(0);
  const stream = new LocalResponseStream((chunk, done) => {
    if (prelude !== undefined && stream.contentType === PRELUDE_CONTENT_TYPE) {
      prelude = Buffer.concat([prelude, chunk]);
      const end = prelude.indexOf(PRELUDE_END);
      if (end === -1) return done();
      const { statusCode = 200, headers = {}, cookies = [] } = JSON.parse(prelude.subarray(0, end).toString('utf8'));
      const rest = prelude.subarray(end + 8);
      prelude = undefined;
      res.writeHead(statusCode, cookies.length > 0 ? { ...headers, 'set-cookie': cookies } : headers);
      // The head leaves with the first body bytes (one write, not two) when they follow in this
      // event-loop turn, as a short answer's do; otherwise (a stream) it is flushed on its own.
      setImmediate(() => {
        if (!res.headersSent && !res.destroyed) res.flushHeaders();
      });
      return write(res, rest, done);
    }
    if (!res.headersSent) res.writeHead(200, { 'content-type': stream.contentType });
    prelude = undefined;
    write(res, chunk, done);
  });
  stream.on('finish', () => res.end());
  res.on('close', () => {
    if (!res.writableFinished) stream.destroy(new Error('client disconnected'));
  });
  try {
    await handler(event, stream, context);
    if (!stream.writableFinished) stream.end();
  } catch (error) {
    if (!res.headersSent) {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'Internal Server Error' }));
    } else if (!res.writableFinished) {
      res.destroy(error as Error);
    }
  }
}

function write(res: http.ServerResponse, chunk: Buffer, done: () => void): void {
  if (chunk.length === 0 || res.destroyed) return done();
  if (res.write(chunk)) return done();
  res.once('drain', done);
}

function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      if (size > limit) return;
      chunks.push(chunk);
      size += chunk.length;
    });
    req.on('end', () => resolve(Buffer.concat(chunks).subarray(0, limit + 1)));
    req.on('error', reject);
  });
}

function toEvent(req: http.IncomingMessage, body: Buffer): LambdaFunctionURLEvent {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const headers: Record<string, string> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = (req.rawHeaders[i] as string).toLowerCase();
    const value = req.rawHeaders[i + 1] as string;
    headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
  }
  const text = TEXT_BODY.test(headers['content-type'] ?? 'application/json');
  const now = new Date();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    queryStringParameters: url.search ? Object.fromEntries(url.searchParams) : undefined,
    requestContext: {
      accountId: 'anonymous',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: { method: req.method ?? 'GET', path: url.pathname, protocol: `HTTP/${req.httpVersion}`, sourceIp: req.socket.remoteAddress ?? '', userAgent: headers['user-agent'] ?? '' },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
    body: body.length === 0 ? undefined : text ? body.toString('utf8') : body.toString('base64'),
    isBase64Encoded: body.length > 0 && !text,
  };
}

function toContext(requestId: string, deadline: number): Context {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'gateway-local',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:gateway-local',
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: 'local',
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}
