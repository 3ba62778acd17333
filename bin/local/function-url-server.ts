import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Context, LambdaFunctionURLEvent } from 'aws-lambda';
import { GatewayError } from '../../lambda/errors.ts';
import type { AbandonReason, RuntimeSignals } from '../../lambda/request-state.ts';
import { LocalResponseStream, PRELUDE_CONTENT_TYPE } from './awslambda-shim.ts';
import { answerClientError, lingeringClose } from './client-errors.ts';
import { announcesBody, BodyBudget, readRequestBody } from './request-body.ts';

/** The streaming handler as the runtime calls it, plus the gateway's optional header-time check. */
export interface StreamingHandler {
  (event: LambdaFunctionURLEvent, stream: LocalResponseStream, context: Context): Promise<unknown>;
  preflight?(event: LambdaFunctionURLEvent): Promise<GatewayError | undefined>;
}

export interface FunctionUrlServerOptions {
  /** Larger bodies are refused with 413 before (or as soon as) they exceed it. */
  maxBodyBytes: number;
  /** What `context.getRemainingTimeInMillis()` counts down from. */
  functionTimeoutMs: number;
  /** The request head must arrive within this (Node's `headersTimeout`): else 408. */
  headersTimeoutMs?: number;
  /** The whole request, body included, must arrive within this (Node's `requestTimeout`): else 408. */
  requestTimeoutMs?: number;
  /** Longest silence between request body bytes: else 408. */
  bodyIdleTimeoutMs?: number;
  /** Request body bytes held at once by invocations in progress: over it, 503. */
  maxInflightBodyBytes?: number;
  /** A client that reads nothing of its response for this long is treated as gone. */
  clientStallTimeoutMs?: number;
  /** Receives a log line for requests Node itself refused (bad head, too-large headers, head timeout). */
  log?: (line: string) => void;
}

export const LOCAL_SERVER_DEFAULTS = {
  headersTimeoutMs: 15_000,
  requestTimeoutMs: 300_000,
  bodyIdleTimeoutMs: 30_000,
  maxInflightBodyBytes: 256 * 1024 * 1024,
  clientStallTimeoutMs: 300_000,
} as const;

export type FunctionUrlServer = http.Server & {
  /** Stops taking requests; lets running ones finish for `graceMs`, then ends them (streams get their format's error event). */
  drain(graceMs: number): Promise<void>;
  /** Invocations in progress. */
  readonly inFlight: number;
};

interface Invocation {
  abandon: AbortController;
  done: Promise<void>;
  /** Abandons the invocation and drops its connection (a client gone, stalled, or held at shutdown). */
  leave(reason: AbandonReason): void;
}

/** At shutdown, how long streams get to write their closing error event before the clients that read nothing are dropped. */
const SHUTDOWN_WRITE_MS = 1_000;

const TEXT_BODY = /^(application\/(.+\+)?json|text\/)/i;
const PRELUDE_END = Buffer.alloc(8);
const NO_BODY = Buffer.alloc(0);

/**
 * A node:http server that does what a Lambda Function URL in RESPONSE_STREAM mode does: turn
 * each request into a payload-2.0 event, invoke the streaming handler, decode the prelude into
 * status and headers, and stream the body on as it is written.
 *
 * Unlike Lambda it sees the client: it checks the key before reading a body (the gateway's
 * preflight), bounds what bodies may hold, and tells the handler through `context.abandon` when
 * the client left or stopped reading, so the upstream call is cancelled. Nothing a client does
 * can reject outside an invocation's own error handling.
 */
export function createFunctionUrlServer(handler: StreamingHandler, options: FunctionUrlServerOptions): FunctionUrlServer {
  const settings = { ...LOCAL_SERVER_DEFAULTS, ...stripUndefined(options) };
  const budget = new BodyBudget(settings.maxInflightBodyBytes);
  const active = new Set<Invocation>();
  let draining = false;
  const run = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const abandon = new AbortController();
    // The response stream is never destroyed (Lambda never does either: a stream ended early leaves
    // middy waiting on it for ever). The handler learns through `abandon` and ends its body; what it
    // still writes for a client that is gone is discarded.
    const leave = (reason: AbandonReason) => {
      if (!abandon.signal.aborted) abandon.abort(reason);
      if (!res.destroyed) res.destroy();
    };
    const invocation: Invocation = { abandon, done: Promise.resolve(), leave };
    active.add(invocation);
    invocation.done = invoke(handler, settings, budget, draining, invocation, req, res)
      .catch(() => void res.destroy())
      .finally(() => active.delete(invocation));
  };
  const server = http.createServer(
    {
      headersTimeout: settings.headersTimeoutMs,
      requestTimeout: settings.requestTimeoutMs,
      // Node checks both timeouts on this interval (30 s by default, which would stretch them).
      connectionsCheckingInterval: Math.max(250, Math.min(1_000, settings.headersTimeoutMs / 2)),
    },
    run,
  );
  server.on('clientError', (error: Error, socket: Duplex) => answerClientError(error, socket, options.log));
  // A WebSocket upgrade is answered by the handler like any request (it says 426).
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex) => {
    const res = new http.ServerResponse(req);
    res.assignSocket(socket as import('node:net').Socket);
    res.shouldKeepAlive = false;
    res.on('finish', () => socket.end());
    run(req, res);
  });
  // A getter, defined (Object.assign would copy its value once).
  Object.defineProperty(server, 'inFlight', { get: () => active.size });
  return Object.assign(server as http.Server & { readonly inFlight: number }, {
    async drain(graceMs: number): Promise<void> {
      draining = true;
      server.close();
      server.closeIdleConnections();
      const settled = () => Promise.allSettled([...active].map((invocation) => invocation.done));
      if (!(await within(settled(), graceMs))) {
        // Running streams end with their format's error event; a client that reads nothing holds
        // its stream (and the usage it owes) until its connection goes, so it is then let go.
        for (const invocation of active) invocation.abandon.abort('shutdown' satisfies AbandonReason);
        if (!(await within(settled(), SHUTDOWN_WRITE_MS))) for (const invocation of active) invocation.leave('shutdown');
        await within(settled(), 5_000);
      }
      server.closeAllConnections();
    },
  });
}

async function invoke(
  handler: StreamingHandler,
  settings: Required<Omit<FunctionUrlServerOptions, 'log'>>,
  budget: BodyBudget,
  draining: boolean,
  { abandon, leave }: Invocation,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const startedAt = Date.now();
  res.on('close', () => {
    if (!res.writableFinished) leave('client_closed');
  });
  let event = toEvent(req, NO_BODY);
  let refusal: GatewayError | undefined;
  let held = 0;
  let bodyRead = !announcesBody(req);
  try {
    if (draining) refusal = new GatewayError('overloaded', 'The gateway is shutting down; retry the request.', { headers: { 'retry-after': '1' } });
    else if (!bodyRead) refusal = await handler.preflight?.(event);
    if (refusal === undefined && !bodyRead) {
      const result = await readRequestBody(req, { maxBodyBytes: settings.maxBodyBytes, idleTimeoutMs: settings.bodyIdleTimeoutMs, budget });
      held = result.held;
      if (result.kind === 'body') {
        bodyRead = true;
        event = toEvent(req, result.body);
      } else if (result.kind === 'refused') refusal = result.error;
      else leave('client_closed');
    }
    if (abandon.signal.aborted) refusal ??= new GatewayError('client_closed', 'The client closed the connection before the request was complete.');
    const stream = responseStream(res, settings.clientStallTimeoutMs, leave);
    const signals: RuntimeSignals = { abandon: abandon.signal, ...(refusal ? { refusal } : {}) };
    const context = Object.assign(toContext(event.requestContext.requestId, startedAt + settings.functionTimeoutMs), signals);
    await handler(event, stream, context);
    if (!stream.writableEnded) stream.end();
  } catch {
    // A handler that failed before its answer started gets Lambda's answer; after it started, the
    // response is cut off, as the Function URL does when the runtime reports an error mid-stream.
    if (!res.headersSent && !res.destroyed) {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'Internal Server Error' }));
    } else res.destroy();
  } finally {
    budget.give(held);
    if (!bodyRead) lingeringClose(req, res);
  }
}

/** The runtime's response stream, decoding the prelude into the HTTP head as a Function URL does. */
function responseStream(res: http.ServerResponse, stallTimeoutMs: number, leave: (reason: AbandonReason) => void): LocalResponseStream {
  let prelude: Buffer | undefined = Buffer.alloc(0);
  const write = (chunk: Buffer, done: () => void) => {
    if (chunk.length === 0 || res.destroyed) return done();
    if (res.write(chunk)) return done();
    // A client that reads nothing for this long is as good as gone: free the upstream and the memory.
    const stalled = setTimeout(() => leave('client_stalled'), stallTimeoutMs);
    const resume = () => {
      clearTimeout(stalled);
      res.off('drain', resume).off('close', resume);
      done();
    };
    res.on('drain', resume).on('close', resume);
  };
  const stream = new LocalResponseStream((chunk, done) => {
    if (prelude !== undefined && stream.contentType === PRELUDE_CONTENT_TYPE) {
      prelude = Buffer.concat([prelude, chunk]);
      const end = prelude.indexOf(PRELUDE_END);
      if (end === -1) return done();
      const { statusCode = 200, headers = {}, cookies = [] } = JSON.parse(prelude.subarray(0, end).toString('utf8'));
      const rest = prelude.subarray(end + 8);
      prelude = undefined;
      if (res.destroyed) return done();
      res.writeHead(statusCode, cookies.length > 0 ? { ...headers, 'set-cookie': cookies } : headers);
      // The head leaves with the first body bytes (one write, not two) when they follow in this
      // event-loop turn, as a short answer's do; otherwise (a stream) it is flushed on its own.
      setImmediate(() => {
        if (!res.headersSent && !res.destroyed) res.flushHeaders();
      });
      return write(rest, done);
    }
    if (!res.headersSent && !res.destroyed) res.writeHead(200, { 'content-type': stream.contentType });
    prelude = undefined;
    write(chunk, done);
  });
  // Errors of this stream are the handler's to see (middy's pipeline rejects with them); an
  // 'error' nobody listens to would otherwise stop the whole process.
  stream.on('error', () => {});
  stream.on('finish', () => {
    if (!res.destroyed) res.end();
  });
  return stream;
}

/** The payload-2.0 event. The path is passed as received, as a Function URL does: the gateway normalises it. */
function toEvent(req: http.IncomingMessage, body: Buffer): LambdaFunctionURLEvent {
  const target = req.url ?? '/';
  const query = target.indexOf('?');
  const rawPath = query === -1 ? target : target.slice(0, query);
  const rawQueryString = query === -1 ? '' : target.slice(query + 1);
  const headers: Record<string, string> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = (req.rawHeaders[i] as string).toLowerCase();
    const value = req.rawHeaders[i + 1] as string;
    headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
  }
  // Compressed bodies are binary whatever their media type: base64, as Lambda passes them.
  const encoded = headers['content-encoding'] !== undefined && headers['content-encoding'].toLowerCase() !== 'identity';
  const text = !encoded && TEXT_BODY.test(headers['content-type'] ?? 'application/json');
  const now = new Date();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    headers,
    queryStringParameters: rawQueryString ? Object.fromEntries(new URLSearchParams(rawQueryString)) : undefined,
    requestContext: {
      accountId: 'anonymous',
      apiId: 'local',
      // A Function URL's own domain, never the client's Host header: here the address this
      // server listens on (the sign-in metadata names it; docs/sign-in.md, "Public origin").
      domainName: listeningAddress(req),
      domainPrefix: 'local',
      http: { method: req.method ?? 'GET', path: rawPath, protocol: `HTTP/${req.httpVersion}`, sourceIp: req.socket.remoteAddress ?? '', userAgent: headers['user-agent'] ?? '' },
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

/** `127.0.0.1:8787`, `[::1]:8787`: where the connection arrived (IPv4 clients of a dual-stack socket in their IPv4 form). */
function listeningAddress(req: http.IncomingMessage): string {
  const address = (req.socket.localAddress ?? '127.0.0.1').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  return `${address.includes(':') ? `[${address}]` : address}:${req.socket.localPort ?? 0}`;
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

async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const done = await Promise.race([promise.then(() => true as const), timeout]);
  clearTimeout(timer);
  return done;
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as T;
}
