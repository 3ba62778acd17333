import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { PassThrough } from 'node:stream';
import { listen } from '../support/gateway-harness.ts';

/**
 * A loopback Lambda Runtime API (version 2018-06-01), the HTTP interface a runtime client
 * polls for invocations and answers on:
 * https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html
 * including the streaming response mode:
 * https://docs.aws.amazon.com/lambda/latest/dg/runtimes-custom.html#runtimes-custom-response-streaming
 *
 * One invocation is handed out at a time, as one execution environment takes them.
 */
const PREFIX = '/2018-06-01/runtime';

/** What the runtime answered for one invocation. */
export type RuntimeResponse =
  /** `/response` with `Lambda-Runtime-Function-Response-Mode: streaming`: the body arrives as it is sent. */
  | { mode: 'streaming'; contentType: string; body: PassThrough; ended: Promise<StreamEnd> }
  /** `/response` without streaming: the whole payload. */
  | { mode: 'buffered'; contentType: string; body: Buffer }
  /** `/error`, `/init/error`, or the platform's own verdict (timeout, runtime exit). */
  | { mode: 'error'; errorType: string; body: string };

/** How a streamed response ended: cleanly, with the runtime's error trailers, or torn off. */
export type StreamEnd = { ok: true } | { ok: false; errorType: string; errorBody: string };

export interface Outcome {
  requestId: string;
  /** 'ok', or the error type: from `/error`, from the stream's error trailers, or the platform's own. */
  result: string;
  /** The error body (decoded from base64 for trailers). */
  detail?: string;
}

export interface Invocation {
  requestId: string;
  /** Set when the runtime took the invocation: Lambda's deadline for it (epoch ms). */
  deadline: number | undefined;
  /**
   * performance.now() when the runtime took the invocation, when its response was complete, and
   * when the runtime next polled `/next` (its handler had returned: the end of billed duration).
   */
  takenAt: number | undefined;
  finishedAt: number | undefined;
  releasedAt: number | undefined;
  /** Resolves with the first answer the runtime gives (or the platform's error). */
  response: Promise<RuntimeResponse>;
  /** Resolves when the invocation is over, response and all. */
  done: Promise<void>;
}

interface Pending extends Invocation {
  event: unknown;
  timeoutMs: number;
  answer(response: RuntimeResponse): void;
  finish(): void;
  /** Ends a streaming body that is still open, as torn off with this error. */
  tear?(errorType: string, errorBody: string): void;
  answered: boolean;
}

export interface RuntimeApi {
  /** host:port, the value of AWS_LAMBDA_RUNTIME_API. */
  address: string;
  functionArn: string;
  /** Queues an invocation; the runtime receives it on its next `/next`. */
  invoke(event: unknown, timeoutMs: number): Invocation;
  /** The invocation the runtime is working on, if any. */
  current(): Invocation | undefined;
  /** The platform ends the invocation in flight (timeout, runtime process gone). */
  abort(errorType: string, message: string): void;
  /** The platform fails the first invocation not yet taken (its runtime died while starting). */
  failQueued(errorType: string, message: string): void;
  /** Invocations not yet taken by the runtime. */
  queued(): number;
  /** Invocations handed to the runtime so far. */
  delivered(): number;
  /** Errors the runtime reported at init (`/init/error`), in order. */
  initErrors: { errorType: string; body: string }[];
  /** How each finished invocation ended, in order: a clean response, the runtime's error, or the platform's. */
  outcomes: Outcome[];
  /** True when every invocation handed out is over, its handler included (the runtime asked for the next). */
  idle(): boolean;
  close(): Promise<void>;
}

export interface RuntimeApiOptions {
  functionName: string;
  /** Called on every `/next` poll, before an invocation is handed out (a first poll ends the runtime's Init phase). */
  onPoll?: () => void;
  /**
   * Closes the runtime's connection right after acknowledging each response, without saying so
   * (no `Connection: close`): what an endpoint may do to a kept-alive connection at any time.
   */
  dropConnectionAfterAnswer?: boolean;
}

export async function startRuntimeApi(options: RuntimeApiOptions): Promise<RuntimeApi> {
  const functionArn = `arn:aws:lambda:us-east-1:123456789012:function:${options.functionName}`;
  const queue: Pending[] = [];
  const byId = new Map<string, Pending>();
  let waiting: ((invocation: Pending) => void) | undefined;
  let active: Pending | undefined;
  let delivered = 0;
  const initErrors: { errorType: string; body: string }[] = [];
  const outcomes: Outcome[] = [];

  let lastDelivered: Pending | undefined;
  const next = (req: http.IncomingMessage, res: http.ServerResponse) => {
    options.onPoll?.();
    if (lastDelivered && lastDelivered.releasedAt === undefined) lastDelivered.releasedAt = performance.now();
    const deliver = (invocation: Pending) => {
      active = invocation;
      lastDelivered = invocation;
      delivered += 1;
      invocation.takenAt = performance.now();
      invocation.deadline = Date.now() + invocation.timeoutMs;
      const body = JSON.stringify(invocation.event);
      res.writeHead(200, {
        'content-type': 'application/json',
        'lambda-runtime-aws-request-id': invocation.requestId,
        'lambda-runtime-deadline-ms': String(invocation.deadline),
        'lambda-runtime-invoked-function-arn': functionArn,
        'lambda-runtime-trace-id': `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomUUID().replaceAll('-', '').slice(0, 24)};Parent=${randomUUID().replaceAll('-', '').slice(0, 16)};Sampled=0`,
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
    };
    const queued = queue.shift();
    if (queued) return deliver(queued);
    // A runtime that goes away while polling stops waiting for it. The listener goes once the
    // poll is answered: the runtime keeps its connection, and one listener per poll would pile up.
    const gone = () => {
      if (waiting === waitForOne) waiting = undefined;
    };
    const waitForOne = (invocation: Pending) => {
      req.socket.off('close', gone);
      deliver(invocation);
    };
    waiting = waitForOne;
    req.socket.once('close', gone);
  };

  const server = http.createServer((req, res) => {
    const path = req.url ?? '';
    if (req.method === 'GET' && path === `${PREFIX}/invocation/next`) return next(req, res);
    if (req.method === 'POST' && path === `${PREFIX}/init/error`) {
      return readAll(req).then((body) => {
        const errorType = header(req, 'lambda-runtime-function-error-type') ?? 'Runtime.Unknown';
        initErrors.push({ errorType, body: body.toString('utf8') });
        // The invocation that caused the cold start fails with the init error.
        fail(active ?? queue.shift(), errorType, body.toString('utf8'));
        accepted(res);
      });
    }
    const match = /^\/2018-06-01\/runtime\/invocation\/([^/]+)\/(response|error)$/.exec(path);
    const invocation = match ? byId.get(decodeURIComponent(match[1] as string)) : undefined;
    if (req.method !== 'POST' || !match || !invocation) {
      res.writeHead(match ? 400 : 404, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ errorMessage: `Invalid request: ${req.method} ${path}`, errorType: match ? 'InvalidRequestID' : 'NotFound' }));
    }
    if (invocation.answered) {
      res.writeHead(400, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ errorMessage: 'Invalid State Transition', errorType: 'InvalidStateTransition' }));
    }
    if (match[2] === 'error') {
      return readAll(req).then((body) => {
        // The header is optional (the client's native part does not send it): the document names the type too.
        const errorType = header(req, 'lambda-runtime-function-error-type') ?? documentErrorType(body) ?? 'Unhandled';
        invocation.answer({ mode: 'error', errorType, body: body.toString('utf8') });
        invocation.finish();
        accepted(res, options.dropConnectionAfterAnswer);
      });
    }
    const contentType = header(req, 'content-type') ?? 'application/octet-stream';
    if (header(req, 'lambda-runtime-function-response-mode')?.toLowerCase() !== 'streaming') {
      return readAll(req).then((body) => {
        invocation.answer({ mode: 'buffered', contentType, body });
        invocation.finish();
        accepted(res, options.dropConnectionAfterAnswer);
      });
    }
    receiveStream(req, res, invocation, contentType, options.dropConnectionAfterAnswer);
  });
  // Invocations wait on `/next` for as long as it takes, like the real API.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  server.keepAliveTimeout = 0;
  const url = await listen(server);

  /** `detail` is the error document, or a message to wrap in one. */
  const fail = (invocation: Pending | undefined, errorType: string, detail: string) => {
    if (!invocation) return;
    const body = detail.startsWith('{') ? detail : JSON.stringify({ errorType, errorMessage: detail });
    invocation.tear?.(errorType, body);
    invocation.answer({ mode: 'error', errorType, body });
    invocation.finish();
  };

  return {
    address: new URL(url).host,
    functionArn,
    initErrors,
    outcomes,
    invoke(event, timeoutMs) {
      const requestId = randomUUID();
      let answer!: (response: RuntimeResponse) => void;
      let finish!: () => void;
      const response = new Promise<RuntimeResponse>((resolve) => (answer = resolve));
      const done = new Promise<void>((resolve) => (finish = resolve));
      const pending: Pending = {
        requestId,
        event,
        timeoutMs,
        deadline: undefined,
        takenAt: undefined,
        finishedAt: undefined,
        releasedAt: undefined,
        response,
        done,
        answered: false,
        answer(value) {
          if (pending.answered) return;
          pending.answered = true;
          if (value.mode === 'buffered') outcomes.push({ requestId, result: 'ok' });
          if (value.mode === 'error') outcomes.push({ requestId, result: value.errorType, detail: value.body });
          if (value.mode === 'streaming') void value.ended.then((end) => outcomes.push(end.ok ? { requestId, result: 'ok' } : { requestId, result: end.errorType, detail: end.errorBody }));
          answer(value);
        },
        finish() {
          pending.finishedAt ??= performance.now();
          byId.delete(requestId);
          if (active === pending) active = undefined;
          finish();
        },
      };
      byId.set(requestId, pending);
      if (waiting) {
        const deliver = waiting;
        waiting = undefined;
        deliver(pending);
      } else {
        queue.push(pending);
      }
      return pending;
    },
    current: () => active,
    idle: () => queue.length === 0 && active === undefined && (lastDelivered === undefined || lastDelivered.releasedAt !== undefined),
    queued: () => queue.length,
    delivered: () => delivered,
    abort: (errorType, message) => fail(active, errorType, message),
    failQueued: (errorType, message) => fail(queue.shift(), errorType, message),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * A streamed response: chunks go on as they arrive; the end is clean unless the runtime sent
 * the error trailers or the request was torn off before its last chunk.
 */
function receiveStream(req: http.IncomingMessage, res: http.ServerResponse, invocation: Pending, contentType: string, drop = false): void {
  const body = new PassThrough();
  let settle!: (end: StreamEnd) => void;
  const ended = new Promise<StreamEnd>((resolve) => (settle = resolve));
  let settled = false;
  const end = (result: StreamEnd) => {
    if (settled) return;
    settled = true;
    settle(result);
    body.end();
    invocation.finish();
  };
  invocation.tear = (errorType, errorBody) => end({ ok: false, errorType, errorBody });
  invocation.answer({ mode: 'streaming', contentType, body, ended });
  req.on('data', (chunk: Buffer) => {
    if (!settled) body.write(chunk);
  });
  req.on('end', () => {
    const errorType = req.trailers['lambda-runtime-function-error-type'];
    const errorBody = req.trailers['lambda-runtime-function-error-body'];
    end(errorType === undefined ? { ok: true } : { ok: false, errorType, errorBody: errorBody === undefined ? '' : Buffer.from(errorBody, 'base64').toString('utf8') });
    accepted(res, drop);
  });
  // No terminating chunk: the runtime's connection went away mid-response.
  req.on('close', () => {
    if (!req.complete) end({ ok: false, errorType: 'Runtime.StreamTruncated', errorBody: 'the response stream closed before its last chunk' });
  });
}

function documentErrorType(body: Buffer): string | undefined {
  try {
    const { errorType } = JSON.parse(body.toString('utf8')) as { errorType?: unknown };
    return typeof errorType === 'string' ? errorType : undefined;
  } catch {
    return undefined;
  }
}

function accepted(res: http.ServerResponse, drop = false): void {
  res.writeHead(202, { 'content-type': 'application/json' });
  res.end('{"status":"OK"}', () => {
    if (drop) res.socket?.destroy();
  });
}

function header(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

function readAll(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
