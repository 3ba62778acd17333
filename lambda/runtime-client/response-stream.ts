import type net from 'node:net';
import { Writable } from 'node:stream';
import { errorDocument, headerSafe } from './error-document.ts';

/**
 * One invocation's streamed response to the Runtime API: `POST …/response` in the streaming mode,
 * chunked, its error trailers declared up front.
 * https://docs.aws.amazon.com/lambda/latest/dg/runtimes-custom.html#runtimes-custom-response-streaming
 *
 * What the handler writes leaves as chunks. Writes made in one turn of the event loop (its
 * microtasks included) leave in one socket write, and the end of the response leaves at once: a
 * whole non-streamed answer is one write (head, prelude, body, last chunk), sent before the
 * handler's work after it. A failure ends the body with the error trailers, which Lambda reports
 * as the invocation's error.
 */
export const PRELUDE_CONTENT_TYPE = 'application/vnd.awslambda.http-integration-response';
/** `HttpResponseStream.from` ends its JSON prelude with 8 NUL bytes; the body follows. */
const PRELUDE_DELIMITER = Buffer.alloc(8);
const CRLF = Buffer.from('\r\n');
const LAST_CHUNK = Buffer.from('0\r\n\r\n');

export class InvocationResponseStream extends Writable {
  readonly #socket: net.Socket;
  readonly #path: string;
  readonly #host: string;
  #contentType = 'application/octet-stream';
  #prelude: string | undefined;
  #started = false;
  #corked = false;
  /** Set once the last chunk (with or without trailers) was written. */
  #ended = false;

  constructor(socket: net.Socket, apiAddress: string, requestId: string) {
    super();
    this.#socket = socket;
    this.#host = apiAddress;
    this.#path = `/2018-06-01/runtime/invocation/${encodeURIComponent(requestId)}/response`;
    // Errors are the handler's to see (its write or pipeline rejects); an 'error' nobody listens
    // to would stop the process.
    this.on('error', () => {});
  }

  /** What `awslambda.HttpResponseStream.from` does: the metadata prelude before the first byte. */
  withPrelude(metadata: unknown): this {
    this.setContentType(PRELUDE_CONTENT_TYPE);
    this.#prelude = JSON.stringify(metadata);
    return this;
  }

  setContentType(contentType: string): void {
    if (this.#started) throw new Error('Cannot set content-type, too late.');
    this.#contentType = contentType;
  }

  /** True once the body was ended, cleanly or with the error trailers. */
  get responseEnded(): boolean {
    return this.#ended;
  }

  /**
   * Ends the body with the error trailers (Lambda's record of why the invocation failed). What
   * was sent before stays sent: a client that already had the head sees its body cut short.
   */
  fail(error: unknown): void {
    if (this.#ended) return;
    const document = errorDocument(error);
    this.#ended = true;
    this.#send([
      Buffer.from(`0\r\nLambda-Runtime-Function-Error-Type: ${headerSafe(document.errorType)}\r\nLambda-Runtime-Function-Error-Body: ${Buffer.from(JSON.stringify(document)).toString('base64')}\r\n\r\n`),
    ]);
    this.#flush();
    if (!this.destroyed) this.destroy();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.#ended) return callback(new Error('the response has already ended'));
    // A socket already gone would never drain: the write fails now instead of hanging.
    if (this.#socket.destroyed) return callback(new Error('the Runtime API closed the connection'));
    const parts: Buffer[] = [];
    if (chunk.length > 0) parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, CRLF);
    // An empty write still starts the response: middy writes '' to send the head of an empty body.
    if (this.#send(parts)) return callback();
    // The socket is full: the next write waits until it drains, or fails if the API went away.
    const socket = this.#socket;
    const settle = (error?: Error) => {
      socket.off('drain', drained).off('close', closed);
      callback(error);
    };
    const drained = () => settle();
    const closed = () => settle(new Error('the Runtime API closed the connection'));
    socket.on('drain', drained).on('close', closed);
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (!this.#ended) {
      this.#ended = true;
      this.#send([LAST_CHUNK]);
      this.#flush();
    }
    callback();
  }

  /**
   * Sends what the turn's writes left corked. At the end of the response it runs at once: the
   * handler's work after its answer (the gateway's usage writes) must not go out first.
   */
  #flush(): void {
    if (!this.#corked) return;
    this.#corked = false;
    this.#socket.uncork();
  }

  /** Writes the parts, after the request head and prelude the first time; false when the socket is full. */
  #send(parts: Buffer[]): boolean {
    if (!this.#started) {
      this.#started = true;
      const head = `POST ${this.#path} HTTP/1.1\r\nHost: ${this.#host}\r\nLambda-Runtime-Function-Response-Mode: streaming\r\nContent-Type: ${this.#contentType}\r\nTransfer-Encoding: chunked\r\nTrailer: Lambda-Runtime-Function-Error-Type, Lambda-Runtime-Function-Error-Body\r\n\r\n`;
      const prelude = this.#prelude === undefined ? [] : [Buffer.from(`${(Buffer.byteLength(this.#prelude) + PRELUDE_DELIMITER.length).toString(16)}\r\n${this.#prelude}`), PRELUDE_DELIMITER, CRLF];
      parts = [Buffer.from(head), ...prelude, ...parts];
    }
    if (!this.#corked) {
      this.#corked = true;
      this.#socket.cork();
      setImmediate(() => this.#flush());
    }
    let room = true;
    for (const part of parts) room = this.#socket.write(part);
    return room;
  }
}
