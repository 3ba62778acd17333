import { parseAnswerHead, type AnswerHead } from './answer-head.ts';
import { BodyFramer } from './body-framer.ts';

/** What an exchange asks of the socket that carries it (connection-pool.ts). */
export interface Carrier {
  pause(): void;
  resume(): void;
  /** The answer is complete: the socket goes back to the pool if `reusable`, else is closed. */
  answered(reusable: boolean, keepAliveMs: number | undefined): void;
  /** Closes the socket: the answer will not be read to its end. */
  drop(): void;
}

/** Body bytes held for a reader that has not come back: past this the socket stops being read. */
const HIGH_WATER_BYTES = 64 * 1024;

type ReadResult = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>;

/**
 * One call and its answer: the request's bytes, the head when it has arrived, then the body
 * piece by piece to one reader. The body is pulled: whatever arrived since the last read comes
 * as one piece, and past HIGH_WATER_BYTES unread the socket is paused, so a slow client holds
 * the upstream back instead of the gateway's memory. A failure (the socket's, a malformed
 * answer, an abort, a cancel) reaches whoever waits: the head's promise or the next read, after
 * the body that arrived before it.
 */
export class Exchange {
  #request: string | Buffer | undefined;
  #headWaiter: { resolve(head: AnswerHead): void; reject(error: Error): void } | undefined;
  /** Set by `whole`: called once the exchange settles. */
  #wholeWaiter: (() => void) | undefined;
  /** Unread body past which the socket is paused (streamed) or the answer refused (whole). */
  #highWater = HIGH_WATER_BYTES;
  #refuseAbove = Infinity;
  #carrier: Carrier | undefined;
  #received: Buffer | undefined;
  #answerHead: AnswerHead | undefined;
  #framer: BodyFramer | undefined;
  #queue: Buffer[] = [];
  #queued = 0;
  #paused = false;
  #ended = false;
  #error: Error | undefined;
  #wake: (() => void) | undefined;
  #onSettled: (() => void) | undefined;

  constructor(request: string | Buffer) {
    this.#request = request;
  }

  /** The answer's head once it has arrived (made on demand: an AWS call waits only for `whole`). */
  head(): Promise<AnswerHead> {
    if (this.#answerHead !== undefined) return Promise.resolve(this.#answerHead);
    if (this.#error !== undefined) return Promise.reject(this.#error);
    return new Promise((resolve, reject) => (this.#headWaiter = { resolve, reject }));
  }

  /**
   * The head and the whole body once the answer is complete, refused past `maxBytes`: one
   * callback when the exchange settles, not a read per piece (the AWS calls, non-streamed answers).
   */
  whole(maxBytes: number): Promise<{ head: AnswerHead; body: Buffer }> {
    this.#refuseAbove = maxBytes;
    this.#highWater = Infinity;
    if (this.#paused) {
      this.#paused = false;
      this.#carrier?.resume();
    }
    if (this.#queued > maxBytes) this.#fail(new Error('The answer is too large.'));
    return new Promise((resolve, reject) => {
      const settle = () => {
        if (this.#error !== undefined) return reject(this.#error);
        const body = this.#queue.length === 1 ? (this.#queue[0] as Buffer) : Buffer.concat(this.#queue, this.#queued);
        this.#queue = [];
        this.#queued = 0;
        resolve({ head: this.#answerHead as AnswerHead, body });
      };
      if (this.settled) settle();
      else this.#wholeWaiter = settle;
    });
  }

  /** Finished one way or the other: its socket is no longer its own. */
  get settled(): boolean {
    return this.#ended || this.#error !== undefined;
  }

  /** Called once when the exchange ends or fails (the caller's abort listener goes then). */
  onSettled(callback: () => void): void {
    this.#onSettled = callback;
  }

  /** Takes the socket that will carry the call, and hands over the request's bytes (not held while the answer streams). */
  attach(carrier: Carrier): string | Buffer {
    this.#carrier = carrier;
    const request = this.#request as string | Buffer;
    this.#request = undefined;
    return request;
  }

  /** Bytes from the socket. */
  received(chunk: Buffer): void {
    try {
      let bytes = chunk;
      if (this.#framer === undefined) {
        const buffer = this.#received === undefined ? chunk : Buffer.concat([this.#received, chunk]);
        const head = parseAnswerHead(buffer);
        if (head === undefined) return void (this.#received = buffer);
        this.#received = undefined;
        this.#answerHead = head;
        this.#framer = new BodyFramer(head);
        this.#headWaiter?.resolve(head);
        this.#headWaiter = undefined;
        bytes = buffer.subarray(head.start);
        if (this.#framer.done) return this.#complete(bytes.length === 0);
      }
      const end = this.#framer.push(bytes, this.#onData);
      if (end >= 0) this.#complete(end === bytes.length);
    } catch (error) {
      this.#fail(error as Error);
    }
  }

  /** The socket closed while carrying this exchange. */
  closed(error: Error | undefined): void {
    this.#carrier = undefined;
    if (this.settled) return;
    // An answer without framing ends where its connection does.
    if (this.#framer?.endsAtClose && error === undefined) return this.#complete(false);
    const reason = this.#answerHead === undefined ? 'socket hang up: the connection closed before an answer' : 'the connection closed before the answer was complete';
    const code = (error as NodeJS.ErrnoException | undefined)?.code ?? 'ECONNRESET';
    this.#fail(Object.assign(new Error(error ? `${reason} (${error.message})` : reason, { cause: error }), { code }));
  }

  /** Fails the exchange and closes its socket (an abort, a refused request). */
  abort(error: Error): void {
    this.#fail(error);
  }

  /**
   * The next piece of the body, or done: what a web stream reader's `read()` gives. One read at a
   * time (the relay and the web stream's pull both wait for each).
   */
  read(): Promise<ReadResult> {
    if (this.#queued > 0 || this.#ended || this.#error !== undefined) return this.#settleRead();
    return new Promise((resolve, reject) => {
      this.#wake = () => {
        this.#wake = undefined;
        this.#settleRead().then(resolve, reject);
      };
    });
  }

  /** Stops reading: the socket is closed unless the answer was complete. */
  cancel(reason?: unknown): Promise<void> {
    this.#queue = [];
    this.#queued = 0;
    if (!this.settled) this.#fail(reason instanceof Error ? reason : new Error('The answer was cancelled.'));
    return Promise.resolve();
  }

  #settleRead(): Promise<ReadResult> {
    if (this.#queued > 0) {
      const value = this.#queue.length === 1 ? (this.#queue[0] as Buffer) : Buffer.concat(this.#queue, this.#queued);
      this.#queue = [];
      this.#queued = 0;
      if (this.#paused) {
        this.#paused = false;
        this.#carrier?.resume();
      }
      return Promise.resolve({ done: false, value });
    }
    if (this.#error !== undefined) return Promise.reject(this.#error);
    return Promise.resolve({ done: true, value: undefined });
  }

  readonly #onData = (piece: Buffer): void => {
    this.#queue.push(piece);
    this.#queued += piece.length;
    // Thrown inside `received`, which fails the exchange.
    if (this.#queued > this.#refuseAbove) throw new Error('The answer is too large.');
    if (this.#queued > this.#highWater && !this.#paused) {
      this.#paused = true;
      this.#carrier?.pause();
    }
    this.#wake?.();
  };

  #complete(nothingLeft: boolean): void {
    this.#ended = true;
    const carrier = this.#carrier;
    this.#carrier = undefined;
    this.#paused = false;
    const head = this.#answerHead as AnswerHead;
    carrier?.answered(nothingLeft && !head.close, head.keepAliveMs);
    this.#settle();
  }

  #fail(error: Error): void {
    if (this.settled) return;
    this.#error = error;
    const carrier = this.#carrier;
    this.#carrier = undefined;
    carrier?.drop();
    this.#headWaiter?.reject(error);
    this.#headWaiter = undefined;
    this.#settle();
  }

  #settle(): void {
    this.#onSettled?.();
    this.#onSettled = undefined;
    this.#wake?.();
    const whole = this.#wholeWaiter;
    this.#wholeWaiter = undefined;
    whole?.();
  }
}
