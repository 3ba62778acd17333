import net from 'node:net';

/**
 * A minimal HTTP/1.1 keep-alive client over a raw socket: the load generator.
 *
 * Why not node:http or fetch: the generator shares a 2-core machine with the stub and the
 * gateway, and measuring a bare Node server directly needs a client that costs less than that
 * server (node:http's client costs about as much per request, fetch about 3x). Requests are
 * pre-serialized bytes; responses are parsed only as far as framing needs (status,
 * content-length or chunked), with the body counted, not kept. SSE events are counted by their
 * blank-line terminator so a stream's completeness can be checked.
 */
export interface ResponseRecord {
  status: number;
  /** performance.now() timestamps: request written, head parsed, first body byte, last byte. */
  startAt: number;
  headersAt: number;
  firstBodyAt: number;
  endAt: number;
  bodyBytes: number;
  events: number;
}

/** Shared by many connections, so a phase can read how much was delivered in a window. */
export interface DeliveryCounter {
  events: number;
  bytes: number;
}

type Phase = 'idle' | 'head' | 'length' | 'size' | 'data' | 'crlf' | 'trailer';

const HEAD_END = Buffer.from('\r\n\r\n');
const EVENT_END = Buffer.from('\n\n');

export class RawConnection {
  readonly #socket: net.Socket;
  readonly #counter: DeliveryCounter | undefined;
  #phase: Phase = 'idle';
  #head: Buffer | undefined;
  #remaining = 0;
  #text = '';
  #lastNewline = false;
  #record: ResponseRecord | undefined;
  #onFirstBody: (() => void) | undefined;
  #settle: { resolve: (record: ResponseRecord) => void; reject: (error: Error) => void } | undefined;
  closed = false;

  private constructor(socket: net.Socket, counter: DeliveryCounter | undefined) {
    this.#socket = socket;
    this.#counter = counter;
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      this.closed = true;
      this.#settle?.reject(new Error(`connection closed in phase ${this.#phase}`));
      this.#settle = undefined;
    });
  }

  static open(url: URL, counter?: DeliveryCounter): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: url.hostname, port: Number(url.port), noDelay: true });
      socket.once('connect', () => {
        socket.removeListener('error', reject);
        resolve(new RawConnection(socket, counter));
      });
      socket.once('error', reject);
    });
  }

  /** Sends one pre-serialized request; resolves when its response has fully arrived. */
  send(request: Buffer, onFirstBody?: () => void): Promise<ResponseRecord> {
    if (this.#settle !== undefined) return Promise.reject(new Error('request already in flight'));
    if (this.closed) return Promise.reject(new Error('connection is closed'));
    return new Promise((resolve, reject) => {
      this.#settle = { resolve, reject };
      this.#onFirstBody = onFirstBody;
      this.#record = { status: 0, startAt: performance.now(), headersAt: 0, firstBodyAt: 0, endAt: 0, bodyBytes: 0, events: 0 };
      this.#phase = 'head';
      this.#lastNewline = false;
      this.#socket.write(request);
    });
  }

  destroy(): void {
    this.#socket.destroy();
  }

  #onData(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length && this.#record !== undefined) {
      switch (this.#phase) {
        case 'head':
          offset = this.#readHead(chunk, offset);
          break;
        case 'length':
        case 'data': {
          const take = Math.min(this.#remaining, chunk.length - offset);
          this.#body(chunk, offset, take);
          offset += take;
          this.#remaining -= take;
          if (this.#remaining > 0) break;
          if (this.#phase === 'length') this.#finish();
          else [this.#phase, this.#remaining] = ['crlf', 2];
          break;
        }
        case 'crlf': {
          const skip = Math.min(this.#remaining, chunk.length - offset);
          offset += skip;
          this.#remaining -= skip;
          if (this.#remaining === 0) this.#phase = 'size';
          break;
        }
        case 'size':
        case 'trailer':
          offset = this.#readLine(chunk, offset);
          break;
        case 'idle':
          throw new Error('unexpected bytes on an idle connection');
      }
    }
  }

  #readHead(chunk: Buffer, offset: number): number {
    const before = this.#head?.length ?? 0;
    const buf = this.#head === undefined ? chunk.subarray(offset) : Buffer.concat([this.#head, chunk.subarray(offset)]);
    const end = buf.indexOf(HEAD_END);
    if (end === -1) {
      this.#head = Buffer.from(buf);
      return chunk.length;
    }
    this.#head = undefined;
    const record = this.#record as ResponseRecord;
    const head = buf.toString('latin1', 0, end).toLowerCase();
    record.status = Number(head.slice(9, 12));
    record.headersAt = performance.now();
    const length = /\r\ncontent-length:\s*(\d+)/.exec(head);
    if (/\r\ntransfer-encoding:[^\r]*chunked/.test(head)) this.#phase = 'size';
    else if (length && Number(length[1]) > 0) [this.#phase, this.#remaining] = ['length', Number(length[1])];
    else this.#finish();
    return offset + end + 4 - before;
  }

  /** A chunk-size line, or the (empty) trailer section after the last chunk. */
  #readLine(chunk: Buffer, offset: number): number {
    const nl = chunk.indexOf(10, offset);
    this.#text += chunk.toString('latin1', offset, nl === -1 ? chunk.length : nl + 1);
    if (nl === -1) return chunk.length;
    const line = this.#text.trimEnd();
    this.#text = '';
    if (this.#phase === 'trailer') {
      if (line === '') this.#finish();
      return nl + 1;
    }
    const size = Number.parseInt(line, 16);
    if (Number.isNaN(size)) throw new Error(`bad chunk size line "${line}"`);
    if (size === 0) this.#phase = 'trailer';
    else [this.#phase, this.#remaining] = ['data', size];
    return nl + 1;
  }

  #body(chunk: Buffer, start: number, length: number): void {
    if (length === 0) return;
    const record = this.#record as ResponseRecord;
    if (record.firstBodyAt === 0) {
      record.firstBodyAt = performance.now();
      this.#onFirstBody?.();
    }
    record.bodyBytes += length;
    const end = start + length;
    let events = this.#lastNewline && chunk[start] === 10 ? 1 : 0;
    for (let at = chunk.indexOf(EVENT_END, start); at !== -1 && at + 2 <= end; at = chunk.indexOf(EVENT_END, at + 2)) events++;
    const endsEvent = length >= 2 && chunk[end - 1] === 10 && chunk[end - 2] === 10;
    this.#lastNewline = !endsEvent && chunk[end - 1] === 10;
    record.events += events;
    if (this.#counter !== undefined) {
      this.#counter.events += events;
      this.#counter.bytes += length;
    }
  }

  #finish(): void {
    const record = this.#record as ResponseRecord;
    record.endAt = performance.now();
    this.#phase = 'idle';
    this.#record = undefined;
    const settle = this.#settle;
    this.#settle = undefined;
    settle?.resolve(record);
  }
}

/** Serializes one request once; the load loops send the same bytes many times. */
export function serializeRequest(url: URL, path: string, headers: Record<string, string>, body: string): Buffer {
  const payload = Buffer.from(body);
  const lines = [`POST ${path} HTTP/1.1`, `host: ${url.host}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`), `content-length: ${payload.length}`];
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), payload]);
}
