import type * as Net from 'node:net';
import { parseAnswerHead, readAnswerBody, type AnswerHead } from './answer-framing.ts';

// process.getBuiltinModule rather than an ES import, as in upstream/node-http-fetch.ts: no ES facade built at import.
const net = process.getBuiltinModule('node:net');
const tls = process.getBuiltinModule('node:tls');

/**
 * POST over kept-alive HTTP/1.1 sockets, for AWS's JSON APIs (two DynamoDB calls per metered
 * request on Lambda): their answers are small and framed by Content-Length. node:http made a
 * ClientRequest, the agent's bookkeeping and an IncomingMessage per call, about 130 us of CPU a
 * call in the runtime profile (docs/performance.md); here a call is one string written to a
 * socket of a pool and its answer parsed as far as framing needs.
 *
 * - A pool per origin, at most MAX_SOCKETS sockets (npm start's local server makes many calls at
 *   once); more calls wait their turn in order. Idle sockets are kept (unref'd: they hold no
 *   process open), the most recently used taken first.
 * - A socket is reused only after a complete answer, with nothing unread, and unless the server
 *   said `Connection: close`; an idle socket the server closed leaves the pool when it closes; one
 *   past the server's `Keep-Alive: timeout` is not taken.
 * - No retry here: a call whose socket failed is a failure of that call (the request may have been
 *   processed), and awsJsonCall's policy decides (aws-json.ts). No timeout either, as with the
 *   node:http agent this replaces: the function's own timeout bounds a hung answer.
 */
export interface TextAnswer {
  status: number;
  text: string;
}

/** Sockets per origin; the agent this replaces had no bound. */
export const MAX_SOCKETS = 32;

interface Call {
  request: string;
  resolve(answer: TextAnswer): void;
  reject(error: Error): void;
}

interface Origin {
  secure: boolean;
  host: string;
  port: number;
  path: string;
  hostHeader: string;
  idle: Connection[];
  open: number;
  waiting: Call[];
  /** The last TLS session, offered by the next new socket (as node:https's agent does). */
  session?: Buffer;
}

const origins = new Map<string, Origin>();

export function postForText(url: string, headers: Record<string, string>, body: string): Promise<TextAnswer> {
  const origin = originOf(url);
  let request = `POST ${origin.path} HTTP/1.1\r\n`;
  let host = false;
  for (const name in headers) {
    const value = headers[name] as string;
    if (UNSAFE.test(name) || UNSAFE.test(value)) return Promise.reject(new TypeError(`Invalid character in header ${JSON.stringify(name)}`));
    if (name.length === 4 && name.toLowerCase() === 'host') host = true;
    request += `${name}: ${value}\r\n`;
  }
  if (!host) request += `host: ${origin.hostHeader}\r\n`;
  request += `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  return new Promise((resolve, reject) => dispatch(origin, { request, resolve, reject }));
}
const UNSAFE = /[\r\n\0]/;

/** Every idle socket closed (tests, npm start's exit); calls in flight finish on theirs. */
export function closeIdleSockets(): void {
  for (const origin of origins.values()) for (const connection of [...origin.idle]) connection.retire();
}

function originOf(url: string): Origin {
  let origin = origins.get(url);
  if (origin === undefined) {
    const parsed = new URL(url);
    const secure = parsed.protocol === 'https:';
    if (!secure && parsed.protocol !== 'http:') throw new TypeError(`Not an http(s) address: ${parsed.protocol}`);
    const host = parsed.hostname.replace(/^\[|\]$/g, '');
    origin = { secure, host, port: Number(parsed.port) || (secure ? 443 : 80), path: `${parsed.pathname}${parsed.search}`, hostHeader: parsed.host, idle: [], open: 0, waiting: [] };
    if (origins.size >= 50) origins.clear();
    origins.set(url, origin);
  }
  return origin;
}

function dispatch(origin: Origin, call: Call): void {
  const now = Date.now();
  for (let connection = origin.idle.pop(); connection !== undefined; connection = origin.idle.pop()) {
    if (connection.usable(now)) return connection.send(call);
    connection.retire();
  }
  if (origin.open < MAX_SOCKETS) return new Connection(origin).send(call);
  origin.waiting.push(call);
}

class Connection {
  private readonly socket: Net.Socket;
  private call: Call | undefined;
  private received: Buffer | undefined;
  private head: AnswerHead | undefined;
  private error: Error | undefined;
  private retired = false;
  private idleUntil = Infinity;
  private readonly origin: Origin;

  constructor(origin: Origin) {
    this.origin = origin;
    origin.open++;
    const { host, port } = origin;
    this.socket = origin.secure ? tls.connect({ host, port, ...(net.isIP(host) ? {} : { servername: host }), ...(origin.session ? { session: origin.session } : {}) }) : net.connect({ host, port });
    this.socket.setNoDelay(true);
    this.socket.setKeepAlive(true, 1_000);
    this.socket.on('data', (chunk: Buffer) => this.onData(chunk));
    this.socket.on('error', (error) => (this.error ??= error));
    this.socket.on('close', () => this.onClose());
    if (origin.secure) this.socket.on('session', (session: Buffer) => (origin.session = session));
  }

  usable(now: number): boolean {
    return !this.retired && this.socket.writable && !this.socket.destroyed && now < this.idleUntil;
  }

  send(call: Call): void {
    this.call = call;
    this.socket.ref();
    this.socket.write(call.request);
  }

  /** Out of the pool for good; the next waiting call gets a new socket in its place. */
  retire(): void {
    if (this.retired) return;
    this.retired = true;
    this.origin.open--;
    const at = this.origin.idle.indexOf(this);
    if (at >= 0) this.origin.idle.splice(at, 1);
    this.socket.destroy();
    const next = this.origin.waiting.shift();
    if (next) dispatch(this.origin, next);
  }

  private onData(chunk: Buffer): void {
    const call = this.call;
    // Bytes nobody asked for: the socket is out of step with its answers.
    if (call === undefined) return this.retire();
    const buffer = this.received === undefined ? chunk : Buffer.concat([this.received, chunk]);
    try {
      this.head ??= parseAnswerHead(buffer);
      if (this.head === undefined) return void (this.received = buffer);
      const body = readAnswerBody(this.head, buffer, false);
      if (body === undefined) return void (this.received = buffer);
      this.finish(call, this.head, body.bytes, body.end === buffer.length);
    } catch (error) {
      this.call = undefined;
      this.retire();
      call.reject(error as Error);
    }
  }

  private onClose(): void {
    const call = this.call;
    this.call = undefined;
    const head = this.head;
    const buffer = this.received ?? Buffer.alloc(0);
    this.retire();
    if (call === undefined) return;
    // An answer without framing ends where its connection does.
    const body = head !== undefined && this.error === undefined ? readAnswerBody(head, buffer, true) : undefined;
    if (body !== undefined) return call.resolve({ status: head!.status, text: body.bytes.toString('utf8') });
    const reason = head === undefined ? 'socket hang up: the connection closed before an answer' : 'the connection closed before the answer was complete';
    call.reject(Object.assign(new Error(this.error ? `${reason} (${this.error.message})` : reason), { code: 'ECONNRESET' }));
  }

  private finish(call: Call, head: AnswerHead, bytes: Buffer, nothingLeft: boolean): void {
    this.call = undefined;
    this.head = undefined;
    this.received = undefined;
    if (head.close || !nothingLeft) this.retire();
    else this.release(head.keepAliveMs);
    call.resolve({ status: head.status, text: bytes.toString('utf8') });
  }

  private release(keepAliveMs: number | undefined): void {
    const next = this.origin.waiting.shift();
    if (next) return this.send(next);
    // A second short of the server's idle timeout: its close may be on the way when ours is sent.
    this.idleUntil = keepAliveMs === undefined ? Infinity : Date.now() + keepAliveMs - 1_000;
    this.socket.unref();
    this.origin.idle.push(this);
  }
}
