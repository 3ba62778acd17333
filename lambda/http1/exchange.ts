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
  readonly head: Promise<AnswerHead>;
  #resolveHead!: (head: AnswerHead) => void;
  #rejectHead!: (error: Error) => void;
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
    this.head = new Promise((resolve, reject) => {
      this.#resolveHead = resolve;
      this.#rejectHead = reject;
    });
    // Awaited by whoever sent the call; this only keeps a failure nobody awaits from being reported as unhandled.
    this.head.catch(() => {});
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
        this.#resolveHead(head);
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

  /** The next piece of the body, or done: what a web stream reader's `read()` gives. */
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

  /** The whole body, refused past `maxBytes`. */
  async collect(maxBytes: number): Promise<Buffer> {
    const pieces: Buffer[] = [];
    let size = 0;
    if ((this.#answerHead?.length ?? 0) > maxBytes) await this.cancel(new Error('The answer is too large.'));
    for (let result = await this.read(); !result.done; result = await this.read()) {
      size += result.value.length;
      if (size > maxBytes) {
        await this.cancel();
        throw new Error('The answer is too large.');
      }
      pieces.push(result.value as Buffer);
    }
    return pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces, size);
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
    if (this.#queued > HIGH_WATER_BYTES && !this.#paused) {
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
    this.#rejectHead(error);
    this.#settle();
  }

  #settle(): void {
    this.#onSettled?.();
    this.#onSettled = undefined;
    this.#wake?.();
  }
}
