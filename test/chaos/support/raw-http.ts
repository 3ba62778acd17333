import net from 'node:net';

/** One HTTP/1.1 response as it arrived on a raw socket. */
export interface RawResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  text: string;
  json(): any;
}

/**
 * A TCP connection driven byte by byte, for what an HTTP client library will not do: hang up in
 * the middle of a request head, send a head one byte a second, announce a body and never send
 * it, send a malformed request line. It records everything the server sends and when the server
 * closes the connection.
 */
export class RawConnection {
  readonly socket: net.Socket;
  /** Resolves when the connection is closed (by either side); `byServer` when the server ended or reset it first. */
  readonly closed: Promise<{ at: number; byServer: boolean }>;
  #chunks: Buffer[] = [];
  #received: Buffer | undefined = Buffer.alloc(0);
  #pauseOnHead = false;
  #isClosed = false;
  #hungUp = false;
  #waiters = new Set<() => void>();

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.#chunks.push(chunk);
      this.#received = undefined;
      if (this.#pauseOnHead && this.received.includes('\r\n\r\n')) socket.pause();
      this.#wake();
    });
    // A reset from the server is an ordinary way for it to close: not an error of the test.
    socket.on('error', () => {});
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        this.#isClosed = true;
        this.#wake();
        resolve({ at: Date.now(), byServer: !this.#hungUp });
      }),
    );
    socket.once('end', () => {
      this.#isClosed = true;
      this.#wake();
    });
  }

  static open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: hostname, port: Number(port) }, () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  get received(): Buffer {
    if (this.#received === undefined) {
      this.#received = Buffer.concat(this.#chunks);
      this.#chunks = [this.#received];
    }
    return this.#received;
  }

  get isClosed(): boolean {
    return this.#isClosed;
  }

  /** Writes and waits until the bytes are handed to the kernel (false if the connection is gone). */
  write(data: string | Buffer): Promise<boolean> {
    if (this.socket.destroyed || !this.socket.writable) return Promise.resolve(false);
    return new Promise((resolve) => this.socket.write(data, (error) => resolve(!error)));
  }

  /** Hangs up with a TCP reset (what a killed client or a load generator's teardown looks like). */
  reset(): void {
    this.#hungUp = true;
    this.socket.resetAndDestroy();
  }

  /** Hangs up with an orderly close (FIN). */
  destroy(): void {
    this.#hungUp = true;
    this.socket.destroy();
  }

  /** Stops reading: the kernel buffers fill and the server's writes back up. */
  pause(): void {
    this.socket.pause();
  }

  /** Stops reading as soon as a response head has arrived (before its body is consumed). */
  pauseOnHead(): void {
    this.#pauseOnHead = true;
  }

  /** The first complete response; rejects with what did arrive if none is complete within `timeoutMs`. */
  async response(timeoutMs = 5_000): Promise<RawResponse> {
    await this.#until(() => parseResponse(this.received, this.#isClosed) !== undefined, timeoutMs, 'a complete response');
    return parseResponse(this.received, this.#isClosed) as RawResponse;
  }

  /** The status line and headers of the first response (its body may still be arriving). */
  async head(timeoutMs = 5_000): Promise<{ status: number; headers: Record<string, string> }> {
    await this.#until(() => parseHead(this.received) !== undefined, timeoutMs, 'a response head');
    return parseHead(this.received) as { status: number; headers: Record<string, string> };
  }

  /** Waits until at least `bytes` bytes have arrived (head included). */
  async receivedAtLeast(bytes: number, timeoutMs = 5_000): Promise<void> {
    await this.#until(() => this.received.length >= bytes, timeoutMs, `${bytes} bytes`);
  }

  /** True if the connection is closed within `timeoutMs`. */
  async closesWithin(timeoutMs: number): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const closed = await Promise.race([this.closed.then(() => true), new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))]);
    clearTimeout(timer);
    return closed;
  }

  #wake(): void {
    for (const waiter of this.#waiters) waiter();
  }

  async #until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (condition()) return;
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (condition()) finish();
        else if (this.#isClosed) finish(new Error(`the connection closed before ${what} arrived; the server sent ${describe(this.received)}`));
      };
      const timer = setTimeout(() => finish(new Error(`${what} did not arrive within ${timeoutMs} ms; the server sent ${describe(this.received)}`)), timeoutMs);
      const finish = (error?: Error) => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        if (error) reject(error);
        else resolve();
      };
      this.#waiters.add(check);
      check();
    });
  }
}

function describe(bytes: Buffer): string {
  if (bytes.length === 0) return 'nothing';
  const text = bytes.subarray(0, 600).toString('latin1');
  return `${bytes.length} bytes: ${JSON.stringify(text)}${bytes.length > 600 ? '...' : ''}`;
}

function parseHead(bytes: Buffer): { status: number; headers: Record<string, string>; bodyStart: number } | undefined {
  const end = bytes.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine, ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  return { status, headers, bodyStart: end + 4 };
}

/** A complete response at the start of `bytes` (content-length, chunked, or closed by the server). */
export function parseResponse(bytes: Buffer, closed: boolean): RawResponse | undefined {
  const head = parseHead(bytes);
  if (!head) return undefined;
  const rest = bytes.subarray(head.bodyStart);
  let body: Buffer | undefined;
  if (head.headers['transfer-encoding']?.includes('chunked')) body = dechunk(rest);
  else if (head.headers['content-length'] !== undefined) {
    const length = Number(head.headers['content-length']);
    if (rest.length >= length) body = rest.subarray(0, length);
  } else if (closed || head.status === 204 || head.status === 304) body = rest;
  if (body === undefined) return undefined;
  const text = body.toString('utf8');
  return { status: head.status, headers: head.headers, body, text, json: () => JSON.parse(text) };
}

function dechunk(bytes: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd === -1) return undefined;
    const size = parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size)) return undefined;
    if (size === 0) return Buffer.concat(parts);
    if (bytes.length < lineEnd + 2 + size + 2) return undefined;
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

/** A request head as bytes; `headers` in order, the Host header added. */
export function requestHead(method: string, path: string, headers: Record<string, string | number> = {}): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'host: 127.0.0.1', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  return `${lines.join('\r\n')}\r\n\r\n`;
}
