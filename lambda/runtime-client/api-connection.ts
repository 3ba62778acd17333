import net from 'node:net';

/**
 * One keep-alive HTTP/1.1 connection to Lambda's Runtime API (AWS_LAMBDA_RUNTIME_API, plain HTTP
 * on the execution environment's loopback), used one exchange after another: the runtime asks for
 * an invocation, streams its response, reads the API's answer, and asks again. Written on the raw
 * socket because that is all it needs: node:http's client costs a request object, an agent's
 * bookkeeping and a parser per exchange, about a quarter of a warm request's CPU
 * (docs/performance.md, "The gateway's own runtime client").
 */
export interface ApiAnswer {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: Buffer;
}

/** An answer head larger than this is not the Runtime API's. */
const MAX_HEAD_BYTES = 64 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');

export class RuntimeApiConnection {
  readonly address: string;
  readonly #host: string;
  readonly #port: number;
  #socket: net.Socket | undefined;
  #connected: Promise<net.Socket> | undefined;
  /** Bytes received and not yet taken by an answer. */
  #chunks: Buffer[] = [];
  #received = 0;
  /** How many bytes the answer being read needs before it is worth parsing again. */
  #need = 1;
  #wake: (() => void) | undefined;
  #closed: Error | undefined;

  constructor(address: string) {
    const colon = address.lastIndexOf(':');
    const digits = address.slice(colon + 1);
    const port = Number(digits);
    if (colon <= 0 || !/^\d{1,5}$/.test(digits) || port < 1 || port > 65_535) throw new Error(`AWS_LAMBDA_RUNTIME_API is not host:port: ${address}`);
    this.address = address;
    this.#host = address.slice(0, colon);
    this.#port = port;
  }

  /** The socket, connecting anew when there is none or the last one closed. */
  socket(): Promise<net.Socket> {
    if (this.#connected) return this.#connected;
    this.#chunks = [];
    this.#received = 0;
    this.#need = 1;
    this.#closed = undefined;
    this.#connected = new Promise((resolve, reject) => {
      const socket = net.connect({ host: this.#host, port: this.#port, noDelay: true });
      socket.once('connect', () => {
        socket.off('error', reject);
        socket.on('error', () => {});
        resolve(socket);
      });
      socket.once('error', reject);
      // A socket this connection has already dropped (close(), a refused answer) may still
      // deliver its last bytes and its close: neither concerns the one that replaced it.
      socket.on('data', (chunk: Buffer) => {
        if (this.#socket !== socket) return;
        this.#chunks.push(chunk);
        this.#received += chunk.length;
        if (this.#received >= this.#need) this.#wake?.();
      });
      socket.once('close', () => {
        if (this.#socket !== socket) return;
        this.#closed = new Error('the Runtime API closed the connection');
        this.#forget();
        this.#wake?.();
      });
      this.#socket = socket;
    });
    this.#connected.catch(() => this.#forget());
    return this.#connected;
  }

  #forget(): void {
    this.#socket = undefined;
    this.#connected = undefined;
  }

  /** One whole request (head and body), then its answer. */
  async exchange(request: Buffer | string): Promise<ApiAnswer> {
    const socket = await this.socket();
    socket.write(request);
    return this.answer();
  }

  /** The next answer on the connection: a Content-Length or a chunked body. */
  async answer(): Promise<ApiAnswer> {
    for (;;) {
      const parsed = this.#received >= this.#need ? this.#parse() : undefined;
      if (parsed) {
        // The API will close this connection: the next exchange opens another rather than race it.
        if (parsed.headers.connection?.toLowerCase() === 'close') this.close();
        return parsed;
      }
      if (this.#closed) throw this.#closed;
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }

  /** Drops the connection: the next exchange opens a new one. */
  close(): void {
    this.#socket?.destroy();
    this.#forget();
  }

  /** The answer at the front of what was received, once it is all there; #need says when to look again. */
  #parse(): ApiAnswer | undefined {
    const data = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks, this.#received);
    this.#chunks = [data];
    const headEnd = data.indexOf(HEAD_END);
    if (headEnd > MAX_HEAD_BYTES || (headEnd < 0 && data.length > MAX_HEAD_BYTES)) throw this.#malformed('an answer head over 64 KiB');
    if (headEnd < 0) {
      this.#need = data.length + 1;
      return undefined;
    }
    const lines = data.toString('latin1', 0, headEnd).split('\r\n');
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] as string)?.[1];
    if (status === undefined) throw this.#malformed('an answer without a status line');
    const headers: Record<string, string> = {};
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i] as string;
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const start = headEnd + HEAD_END.length;
    const body = headers['transfer-encoding']?.toLowerCase() === 'chunked' ? this.#chunked(data, start) : this.#sized(data, start, headers['content-length']);
    if (body === undefined) {
      this.#need = Math.max(data.length + 1, start + Number(headers['content-length'] ?? 0));
      return undefined;
    }
    this.#take(data, body.end);
    return { status: Number(status), headers, body: body.bytes };
  }

  #sized(data: Buffer, start: number, length: string | undefined): { bytes: Buffer; end: number } | undefined {
    const size = length === undefined ? 0 : Number(length);
    if (!Number.isSafeInteger(size) || size < 0) throw this.#malformed(`a Content-Length of ${length}`);
    if (data.length < start + size) return undefined;
    return { bytes: data.subarray(start, start + size), end: start + size };
  }

  #chunked(data: Buffer, start: number): { bytes: Buffer; end: number } | undefined {
    const parts: Buffer[] = [];
    for (let at = start; ; ) {
      const lineEnd = data.indexOf('\r\n', at);
      if (lineEnd < 0) return undefined;
      const size = Number.parseInt(data.toString('latin1', at, lineEnd), 16);
      if (!Number.isSafeInteger(size) || size < 0) throw this.#malformed('a malformed chunk size');
      if (size === 0) {
        // Trailers, if any, end with an empty line.
        const end = data.indexOf(HEAD_END, lineEnd);
        const bare = data.subarray(lineEnd, lineEnd + 4).equals(HEAD_END);
        if (!bare && end < 0) return undefined;
        return { bytes: Buffer.concat(parts), end: (bare ? lineEnd : end) + 4 };
      }
      if (data.length < lineEnd + 2 + size + 2) return undefined;
      parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }

  #take(data: Buffer, end: number): void {
    const rest = data.subarray(end);
    this.#chunks = rest.length > 0 ? [rest] : [];
    this.#received = rest.length;
    this.#need = 1;
  }

  #malformed(what: string): Error {
    this.close();
    return new Error(`the Runtime API sent ${what}`);
  }
}
