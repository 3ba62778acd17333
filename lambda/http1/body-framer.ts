import { MAX_HEAD_BYTES, type AnswerHead } from './answer-head.ts';

/** Longest chunk-size line (with extensions) the framer waits for. */
const MAX_SIZE_LINE = 1024;

/** Where the chunked decoding is: a size line, a chunk's data, the CRLF after it, the trailers. */
const Step = { Size: 0, Data: 1, DataEnd: 2, Trailer: 3 } as const;

/**
 * Where an answer's body is in the bytes of its socket, as they arrive (RFC 9112 sections 6-7):
 * Content-Length, chunked (decoded: sizes, extensions and trailers dropped), or to the
 * connection's close. `push` hands each piece of body on as it comes, so a streamed answer is
 * relayed event by event, and says where the answer ended: bytes past it are not this answer's.
 */
export class BodyFramer {
  #remaining: number;
  readonly #chunked: boolean;
  #step: number = Step.Size;
  /** The start of a size line, a chunk's CRLF or a trailer line that a read cut in two. */
  #pending: Buffer | undefined;
  #done: boolean;

  constructor(head: AnswerHead) {
    this.#chunked = head.chunked;
    this.#remaining = head.length;
    this.#done = head.length === 0;
  }

  /** Whether the whole body has been framed. */
  get done(): boolean {
    return this.#done;
  }

  /** Whether the connection's close ends this body (rather than cutting it short). */
  get endsAtClose(): boolean {
    return !this.#chunked && this.#remaining < 0;
  }

  /**
   * Frames `bytes`, handing body pieces to `onData`. Returns -1 while the answer goes on, else
   * the offset in `bytes` just past its end. Throws on malformed chunking.
   */
  push(bytes: Buffer, onData: (piece: Buffer) => void): number {
    if (this.#done) return 0;
    if (!this.#chunked) {
      if (this.#remaining < 0) {
        if (bytes.length > 0) onData(bytes);
        return -1;
      }
      const take = Math.min(this.#remaining, bytes.length);
      if (take > 0) onData(take === bytes.length ? bytes : bytes.subarray(0, take));
      this.#remaining -= take;
      this.#done = this.#remaining === 0;
      return this.#done ? take : -1;
    }
    return this.#dechunk(bytes, onData);
  }

  #dechunk(bytes: Buffer, onData: (piece: Buffer) => void): number {
    const carried = this.#pending?.length ?? 0;
    const buffer = this.#pending === undefined ? bytes : Buffer.concat([this.#pending, bytes]);
    this.#pending = undefined;
    let at = 0;
    while (at < buffer.length) {
      if (this.#step === Step.Data) {
        const take = Math.min(this.#remaining, buffer.length - at);
        onData(buffer.subarray(at, at + take));
        this.#remaining -= take;
        at += take;
        if (this.#remaining === 0) this.#step = Step.DataEnd;
        continue;
      }
      if (this.#step === Step.DataEnd) {
        if (buffer.length - at < 2) break;
        if (buffer[at] !== 13 || buffer[at + 1] !== 10) throw new Error('A malformed chunk in the answer.');
        at += 2;
        this.#step = Step.Size;
        continue;
      }
      const lineEnd = buffer.indexOf('\r\n', at);
      if (lineEnd < 0) {
        if (buffer.length - at > (this.#step === Step.Size ? MAX_SIZE_LINE : MAX_HEAD_BYTES)) throw new Error('A malformed chunk in the answer.');
        break;
      }
      if (this.#step === Step.Trailer) {
        // Trailers are skipped up to the empty line that ends the answer.
        const empty = lineEnd === at;
        at = lineEnd + 2;
        if (!empty) continue;
        this.#done = true;
        return at - carried;
      }
      const sizeText = buffer.toString('latin1', at, lineEnd).split(';')[0]?.trim() ?? '';
      if (!/^[0-9a-fA-F]{1,8}$/.test(sizeText)) throw new Error('A malformed chunk in the answer.');
      this.#remaining = parseInt(sizeText, 16);
      this.#step = this.#remaining === 0 ? Step.Trailer : Step.Data;
      at = lineEnd + 2;
    }
    if (at < buffer.length) this.#pending = buffer.subarray(at);
    return -1;
  }
}
