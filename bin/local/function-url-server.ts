import http from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Context, LambdaFunctionURLEvent } from 'aws-lambda';
import { GatewayError } from '../../lambda/errors.ts';
import type { AbandonReason, BodyMemory, Preflight, RuntimeSignals } from '../../lambda/request-state.ts';
import type { LocalResponseStream } from './awslambda-shim.ts';
import { answerClientError, lingeringClose } from './client-errors.ts';
import { ConnectionGate } from './connection-gate.ts';
import { toContext, toEvent, withBody } from './function-url-event.ts';
import { announcesBody, BodyBudget, readRequestBody } from './request-body.ts';
import { responseStream } from './response-stream.ts';

/**
 * The streaming handler as the runtime calls it, plus the gateway's optional header-time check
 * (without it every request counts as authenticated and may bring a body up to `maxBodyBytes`).
 */
export interface StreamingHandler {
  (event: LambdaFunctionURLEvent, stream: LocalResponseStream, context: Context): Promise<unknown>;
  preflight?(event: LambdaFunctionURLEvent): Promise<Preflight>;
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
  /** Request body bytes held at once by invocations in progress, received and decoded: over it, 503. */
  maxInflightBodyBytes?: number;
  /** Largest body a Content-Encoding may decode to (default: `maxBodyBytes`). */
  maxDecodedBodyBytes?: number;
  /** Connections that have not yet carried a request with an accepted key: over it, the oldest is closed. */
  maxUnauthenticatedConnections?: number;
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
  maxUnauthenticatedConnections: 256,
  clientStallTimeoutMs: 300_000,
} as const;

/**
 * Body bytes all unauthenticated requests together may hold: only a route whose preflight names
 * an allowance for them (a sign-in form post) reads their body at all, and never from the
 * authenticated requests' budget.
 */
const UNAUTHENTICATED_BODY_BUDGET = 1024 * 1024;

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

type Settings = Required<Omit<FunctionUrlServerOptions, 'log'>>;

/** What every invocation shares: the limits, the budgets, the connection gate. */
interface Shared {
  settings: Settings;
  budget: BodyBudget;
  unauthenticatedBudget: BodyBudget;
  gate: ConnectionGate;
}

/** At shutdown, how long streams get to write their closing error event before the clients that read nothing are dropped. */
const SHUTDOWN_WRITE_MS = 1_000;

const NO_BODY = Buffer.alloc(0);

/**
 * A node:http server that does what a Lambda Function URL in RESPONSE_STREAM mode does: turn
 * each request into a payload-2.0 event, invoke the streaming handler, decode the prelude into
 * status and headers, and stream the body on as it is written.
 *
 * Unlike Lambda it sees the client: it checks the key before reading a body (the gateway's
 * preflight, which also says how much body a route takes: none on the open routes), bounds what
 * bodies may hold (received and decoded), caps the connections that have not shown a key, and
 * tells the handler through `context.abandon` when the client left or stopped reading, so the
 * upstream call is cancelled. Nothing a client does can reject outside an invocation's own error
 * handling.
 */
export function createFunctionUrlServer(handler: StreamingHandler, options: FunctionUrlServerOptions): FunctionUrlServer {
  const settings: Settings = { ...LOCAL_SERVER_DEFAULTS, maxDecodedBodyBytes: options.maxBodyBytes, ...stripUndefined(options) };
  const shared: Shared = {
    settings,
    budget: new BodyBudget(settings.maxInflightBodyBytes),
    unauthenticatedBudget: new BodyBudget(UNAUTHENTICATED_BODY_BUDGET),
    gate: new ConnectionGate(settings.maxUnauthenticatedConnections),
  };
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
    invocation.done = invoke(handler, shared, draining, invocation, req, res)
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
  server.on('connection', (socket: Socket) => shared.gate.admit(socket));
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
  { settings, budget, unauthenticatedBudget, gate }: Shared,
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
  // Until the head has shown a key, nothing of the authenticated requests' budget.
  let charged = unauthenticatedBudget;
  let decoded = 0;
  const bodyMemory: BodyMemory = {
    maxDecodedBytes: settings.maxDecodedBodyBytes,
    take: (bytes) => charged.take(bytes) && ((decoded += bytes), true),
  };
  try {
    let head: Preflight = { authenticated: true, maxBodyBytes: settings.maxBodyBytes };
    if (draining) refusal = new GatewayError('overloaded', 'The gateway is shutting down; retry the request.', { headers: { 'retry-after': '1' } });
    else if (handler.preflight) {
      head = await handler.preflight(event);
      refusal = head.refusal;
    }
    if (head.authenticated) {
      gate.prove(req.socket);
      charged = budget;
    }
    // A body the route does not take (an open route's) is not read into memory: after the answer
    // a short one is discarded, a longer one left unread and its connection closed (lingeringClose).
    if (refusal === undefined && !bodyRead && head.maxBodyBytes > 0) {
      const result = await readRequestBody(req, { maxBodyBytes: Math.min(head.maxBodyBytes, settings.maxBodyBytes), idleTimeoutMs: settings.bodyIdleTimeoutMs, budget: charged });
      held = result.held;
      if (result.kind === 'body') {
        bodyRead = true;
        event = withBody(event, result.body);
      } else if (result.kind === 'refused') refusal = result.error;
      else leave('client_closed');
    }
    if (abandon.signal.aborted) refusal ??= new GatewayError('client_closed', 'The client closed the connection before the request was complete.');
    const stream = responseStream(res, settings.clientStallTimeoutMs, leave);
    const signals: RuntimeSignals = { abandon: abandon.signal, bodyMemory, ...(refusal ? { refusal } : {}) };
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
    charged.give(held + decoded);
    if (!bodyRead) lingeringClose(req, res);
  }
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
