import type * as Net from 'node:net';
import { TOKEN } from './answer-head.ts';
import { Exchange, type Carrier } from './exchange.ts';

// process.getBuiltinModule rather than an ES import: no ES facade of the module built at import.
const net = process.getBuiltinModule('node:net');
const tls = process.getBuiltinModule('node:tls');

/**
 * HTTP/1.1 calls over kept-alive sockets, one call per socket at a time: the gateway's one HTTP
 * client, for its upstreams (upstream/upstream-fetch.ts) and AWS's JSON APIs (aws/kept-alive-post.ts).
 * node:http made a ClientRequest, the agent's bookkeeping and an IncomingMessage per call, a
 * fifth of the CPU of a proxied request (docs/performance.md); here a call is one string
 * written to a socket and its answer framed as it arrives (exchange.ts).
 *
 * - A pool per origin, at most `maxSockets` sockets; more calls wait their turn in order. Idle
 *   sockets are kept (unref'd: they hold no process open), at most `maxIdle`, the most recently
 *   used taken first.
 * - A socket is reused only after a complete answer with nothing unread, unless the server said
 *   `Connection: close`; an idle socket the server closed leaves the pool when it closes; one
 *   past the server's `Keep-Alive: timeout` (less a second) is not taken.
 * - No retry and no timeout here, as with the node:http agent this replaces: a call whose socket
 *   failed is a failure of that call (the request may have been processed); callers decide
 *   (aws-json.ts retries, call-upstream.ts aborts at its deadlines).
 */
export interface PoolLimits {
  maxSockets: number;
  maxIdle: number;
}

interface Origin {
  secure: boolean;
  host: string;
  port: number;
  idle: Connection[];
  open: number;
  waiting: Exchange[];
  /** The last TLS session, offered by the next new socket (as node:https's agent does). */
  session?: Buffer;
}

interface Target {
  origin: string;
  path: string;
  hostHeader: string;
  secure: boolean;
  host: string;
  port: number;
}

/** Header values node:http accepts (no control characters but tab). */
const INVALID_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const NON_ASCII = /[^\x00-\x7f]/;

export class ConnectionPool {
  readonly #limits: PoolLimits;
  readonly #origins = new Map<string, Origin>();
  readonly #targets = new Map<string, Target>();

  constructor(limits: PoolLimits) {
    this.#limits = limits;
  }

  /**
   * Sends a call; its answer comes through the exchange. Throws (before anything is sent) on a
   * header node:http would refuse or an address that is not http(s).
   */
  send(url: string, method: string, headers: Record<string, string>, body: string | Uint8Array): Exchange {
    const target = this.#targetOf(url);
    const exchange = new Exchange(requestBytes(target, method, headers, body));
    this.#dispatch(this.#originOf(target), exchange);
    return exchange;
  }

  /**
   * Opens one socket to the address's origin ahead of any call, unless it has one, and parks it
   * idle; settles when it is connected (TLS handshake done) or has failed (it then just leaves the pool).
   */
  preconnect(url: string): Promise<void> {
    const origin = this.#originOf(this.#targetOf(url));
    if (origin.open > 0 || origin.open >= this.#limits.maxSockets) return Promise.resolve();
    const connection = new Connection(origin, this);
    connection.park();
    return connection.connected;
  }

  /** Every idle socket closed (tests: idle sockets are unref'd and hold no process open); calls in flight finish on theirs. */
  closeIdle(): void {
    for (const origin of this.#origins.values()) for (const connection of [...origin.idle]) connection.retire();
  }

  #dispatch(origin: Origin, exchange: Exchange): void {
    const now = Date.now();
    for (let connection = origin.idle.pop(); connection !== undefined; connection = origin.idle.pop()) {
      if (connection.usable(now)) return connection.send(exchange);
      connection.retire();
    }
    if (origin.open < this.#limits.maxSockets) return new Connection(origin, this).send(exchange);
    origin.waiting.push(exchange);
  }

  /** A socket came free (its answer complete) or closed: the next waiting call, if any, goes now. */
  next(origin: Origin, free: Connection | undefined): void {
    let exchange = origin.waiting.shift();
    // An abort while waiting settles the exchange: it is dropped from the line here.
    while (exchange?.settled) exchange = origin.waiting.shift();
    if (exchange === undefined) {
      if (free === undefined) return;
      if (origin.idle.length >= this.#limits.maxIdle) return free.retire();
      return free.park();
    }
    if (free !== undefined) return free.send(exchange);
    this.#dispatch(origin, exchange);
  }

  #targetOf(url: string): Target {
    let target = this.#targets.get(url);
    if (target === undefined) {
      const parsed = new URL(url);
      const secure = parsed.protocol === 'https:';
      if (!secure && parsed.protocol !== 'http:') throw new TypeError(`Not an http(s) address: ${parsed.protocol}`);
      const host = parsed.hostname.replace(/^\[|\]$/g, '');
      const port = Number(parsed.port) || (secure ? 443 : 80);
      target = { origin: `${parsed.protocol}//${host}:${port}`, path: `${parsed.pathname}${parsed.search}`, hostHeader: parsed.host, secure, host, port };
      if (this.#targets.size >= 100) this.#targets.clear();
      this.#targets.set(url, target);
    }
    return target;
  }

  #originOf(target: Target): Origin {
    let origin = this.#origins.get(target.origin);
    if (origin === undefined) {
      // Bounded: origins holding no socket and no waiting call are forgotten first.
      if (this.#origins.size >= 50) for (const [key, old] of this.#origins) if (old.open === 0 && old.waiting.length === 0) this.#origins.delete(key);
      origin = { secure: target.secure, host: target.host, port: target.port, idle: [], open: 0, waiting: [] };
      this.#origins.set(target.origin, origin);
    }
    return origin;
  }
}

/** The request's bytes: one string (one write) unless a header holds non-ASCII, sent as latin1 as node:http does. */
function requestBytes(target: Target, method: string, headers: Record<string, string>, body: string | Uint8Array): string | Buffer {
  let head = `${method} ${target.path} HTTP/1.1\r\n`;
  let host = false;
  for (const name in headers) {
    const value = String(headers[name]);
    if (!TOKEN.test(name)) throw new TypeError(`Invalid header name ${JSON.stringify(name)}`);
    if (INVALID_VALUE.test(value)) throw new TypeError(`Invalid character in header ${JSON.stringify(name)}`);
    const lower = name.toLowerCase();
    // The length is this client's to state, from the body it sends.
    if (lower === 'content-length' || lower === 'transfer-encoding') continue;
    if (lower === 'host') host = true;
    head += `${name}: ${value}\r\n`;
  }
  if (!host) head += `host: ${target.hostHeader}\r\n`;
  head += `content-length: ${typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength}\r\n\r\n`;
  if (typeof body === 'string' && !NON_ASCII.test(head)) return head + body;
  return Buffer.concat([Buffer.from(head, 'latin1'), typeof body === 'string' ? Buffer.from(body) : body]);
}

class Connection implements Carrier {
  readonly #socket: Net.Socket;
  readonly #origin: Origin;
  readonly #pool: ConnectionPool;
  #exchange: Exchange | undefined;
  #error: Error | undefined;
  #retired = false;
  #idleUntil = Infinity;
  /** Settles once connected (TLS included) or closed. */
  readonly connected: Promise<void>;

  constructor(origin: Origin, pool: ConnectionPool) {
    this.#origin = origin;
    this.#pool = pool;
    origin.open++;
    const { host, port } = origin;
    this.#socket = origin.secure ? tls.connect({ host, port, ...(net.isIP(host) ? {} : { servername: host }), ...(origin.session ? { session: origin.session } : {}) }) : net.connect({ host, port });
    this.#socket.setNoDelay(true);
    this.#socket.setKeepAlive(true, 1_000);
    this.#socket.on('data', (chunk: Buffer) => {
      // Bytes nobody asked for: the socket is out of step with its answers.
      if (this.#exchange === undefined) return this.retire();
      this.#exchange.received(chunk);
    });
    this.#socket.on('error', (error) => (this.#error ??= error));
    this.#socket.on('close', () => {
      const exchange = this.#exchange;
      this.#exchange = undefined;
      this.retire();
      exchange?.closed(this.#error);
    });
    if (origin.secure) this.#socket.on('session', (session: Buffer) => (origin.session = session));
    this.connected = new Promise((resolve) => {
      this.#socket.once(origin.secure ? 'secureConnect' : 'connect', () => resolve());
      this.#socket.once('close', () => resolve());
    });
  }

  usable(now: number): boolean {
    return !this.#retired && this.#socket.writable && !this.#socket.destroyed && now < this.#idleUntil;
  }

  send(exchange: Exchange): void {
    this.#exchange = exchange;
    this.#socket.ref();
    this.#socket.write(exchange.attach(this));
  }

  /** Idle in its origin's pool until the next call. */
  park(): void {
    this.#socket.unref();
    this.#origin.idle.push(this);
  }

  pause(): void {
    this.#socket.pause();
  }

  resume(): void {
    this.#socket.resume();
  }

  answered(reusable: boolean, keepAliveMs: number | undefined): void {
    this.#exchange = undefined;
    if (!reusable) return this.retire();
    this.#socket.resume();
    // A second short of the server's idle timeout: its close may be on the way when ours is sent.
    this.#idleUntil = keepAliveMs === undefined ? Infinity : Date.now() + keepAliveMs - 1_000;
    this.#pool.next(this.#origin, this);
  }

  drop(): void {
    this.#exchange = undefined;
    this.retire();
  }

  /** Out of the pool for good; the next waiting call gets a new socket in its place. */
  retire(): void {
    if (this.#retired) return;
    this.#retired = true;
    this.#origin.open--;
    const at = this.#origin.idle.indexOf(this);
    if (at >= 0) this.#origin.idle.splice(at, 1);
    this.#socket.destroy();
    this.#pool.next(this.#origin, undefined);
  }
}
