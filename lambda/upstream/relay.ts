import { Readable } from 'node:stream';
import { SseEventSplitter } from '../formats/sse/event-splitter.ts';
import type { StreamObserver } from '../formats/stream-observer.ts';
import { unwatch, watchEvery, type Watcher } from './stream-watch.ts';

/** Turns upstream stream bytes into client stream bytes (as they are, or translated). */
export interface StreamProcessor {
  /** Client bytes for one upstream chunk, or undefined when nothing is complete yet. */
  push(chunk: Uint8Array): Uint8Array | undefined;
  /** The upstream ended cleanly: last client bytes, and how the stream ended. */
  end(): { bytes: Uint8Array | undefined; outcome: string };
  /** The upstream failed: the client bytes that end the stream in its format. */
  fail(message: string): Uint8Array;
  /** Bytes that keep the client connection alive during upstream silence, if the format has any. */
  keepalive?(): Uint8Array | undefined;
  /** True once the stream carried its terminal event. */
  readonly finished: boolean;
}

export interface RelayHooks {
  /** Called once, when the first bytes go to the client. */
  onFirstByte(): void;
  /** Called once, when the relay ends: 'ok', 'client_closed' or why the upstream failed. */
  onEnd(outcome: string): void;
  /** Cancels the upstream request (client gone, upstream idle). */
  abortUpstream(reason: string): void;
  /** Classifies a failure: the outcome to log and the client-facing text (never internals). */
  describeFailure(error: unknown): { outcome: string; message: string };
  /** The outcome of a stream the client side cancelled (default `client_closed`). */
  describeCancel?(): string;
  /** The gateway's own code threw while relaying (a processor, a hook): for the log, never the client. */
  onFault?(error: unknown): void;
  /** Send the processor's keepalive after this much silence towards the client. */
  keepaliveMs?: number;
  /** Pad every write shorter than this with an SSE comment line up to this many bytes (GATEWAY_STREAM_PAD_BYTES). */
  padBytes?: number;
  /** Fail the stream when the upstream sends nothing for this long (keepalives must not hide a dead upstream). */
  idleTimeoutMs?: number;
}

const encoder = new TextEncoder();

/** The client-facing text when the gateway itself fails mid-stream (a bug: the cause is logged, never sent). */
export const RELAY_FAULT_MESSAGE = 'The gateway failed while relaying the stream.';

/**
 * What the relay reads upstream chunks from: a web stream's reader, or the upstream client's
 * exchange itself (`bodyReaderOf`, light-response.ts; http1/exchange.ts), with no web stream in between.
 */
export type ChunkReader = Pick<ReadableStreamDefaultReader<Uint8Array>, 'read' | 'cancel'>;

/**
 * Relays an upstream body to the client through a processor, as a Node `Readable` (middy pipes
 * it to the response stream; a web `ReadableStream` here cost a stream, its controller and
 * pipeline's web adapter per open stream, the largest JS cost per relayed event after the write).
 *
 * Pull-based with no internal queue (highWaterMark 0): the upstream is read only as fast as the
 * client consumes, so memory per stream stays at one pending event. Whatever goes wrong, the
 * stream ends with the processor's in-format error, never with a torn frame or plain text, and
 * the stream itself never errors: the Lambda runtime client exits on a response stream that
 * errors (an unhandled rejection), losing the request's log line and usage record and making
 * the next request a cold start (test/runtime/robustness.test.ts). So even a fault of the
 * gateway's own code (a processor or hook that throws) ends the stream with the in-format error,
 * outcome `internal_error`, its message given to `onFault` for the log. Destroyed before its end
 * (the response stream failed, or the reader gave up), it cancels the upstream as a client
 * hang-up.
 */
export function relayStream(source: ReadableStream<Uint8Array> | ChunkReader, processor: StreamProcessor, hooks: RelayHooks): Readable {
  const reader: ChunkReader = source instanceof ReadableStream ? source.getReader() : source;
  let started = false;
  let ended = false;
  // Set while a read of the upstream is outstanding: only then is the upstream the one keeping the
  // client waiting. A client that stops reading stops the reads, and must not be blamed on it.
  let waitingSince: number | undefined;
  let lastClient = Date.now();
  let watched = false;
  // A relay step in progress, and whether the consumer asked for more meanwhile (a keepalive push lets it).
  let busy = false;
  let wanted = false;

  const emit = (bytes: Uint8Array | undefined) => {
    if (!bytes || bytes.byteLength === 0 || ended) return;
    if (!started) {
      started = true;
      hooks.onFirstByte();
    }
    lastClient = Date.now();
    output.push(hooks.padBytes !== undefined && bytes.byteLength < hooks.padBytes ? padded(bytes, hooks.padBytes) : bytes);
  };
  const stopWatching = () => {
    if (watched) unwatch(watch);
    watched = false;
  };
  const end = (outcome: string, bytes?: Uint8Array) => {
    if (ended) return;
    emit(bytes);
    ended = true;
    stopWatching();
    output.push(null);
    hooks.onEnd(outcome);
  };
  /** The gateway's own fault: close with the format's error if the processor can still make one, else just close. */
  const fault = (error: unknown) => {
    if (ended) return;
    let bytes: Uint8Array | undefined;
    try {
      hooks.onFault?.(error);
      hooks.abortUpstream('gateway fault');
      bytes = processor.fail(RELAY_FAULT_MESSAGE);
    } catch {
      // nothing more can be said in the format; the stream still ends cleanly
    }
    try {
      end('internal_error', bytes);
    } catch {
      ended = true;
      stopWatching();
    }
  };
  const watch: Watcher = (now) => {
    try {
      if (hooks.idleTimeoutMs !== undefined && waitingSince !== undefined && now - waitingSince >= hooks.idleTimeoutMs) {
        hooks.abortUpstream('upstream idle');
        end('upstream_idle', processor.fail(`The upstream sent nothing for ${Math.round(hooks.idleTimeoutMs / 1000)} s.`));
      } else if (hooks.keepaliveMs !== undefined && processor.keepalive && now - lastClient >= hooks.keepaliveMs) {
        emit(processor.keepalive());
      }
    } catch (error) {
      // A throw in a timer would be an uncaught exception: the end of the process.
      fault(error);
    }
  };

  /** Reads upstream chunks until one gives client bytes, or the upstream ends or fails. */
  const relayNext = async () => {
    for (;;) {
      let result: Awaited<ReturnType<typeof reader.read>>;
      waitingSince = Date.now();
      try {
        result = await reader.read();
      } catch (error) {
        if (ended) return;
        // An answer that was already complete loses nothing to a late reset.
        if (processor.finished) return end('ok');
        const { outcome, message } = hooks.describeFailure(error);
        end(outcome, processor.fail(message));
        return;
      } finally {
        waitingSince = undefined;
      }
      if (ended) return;
      if (result.done) {
        const finished = processor.end();
        end(finished.outcome, finished.bytes);
        return;
      }
      const bytes = processor.push(result.value);
      if (bytes) {
        emit(bytes);
        return;
      }
    }
  };
  const pump = async () => {
    busy = true;
    do {
      wanted = false;
      try {
        await relayNext();
      } catch (error) {
        fault(error);
      }
    } while (wanted && !ended);
    busy = false;
  };

  const output = new Readable({
    highWaterMark: 0,
    read() {
      if (busy) wanted = true;
      else void pump();
    },
    destroy(error, callback) {
      if (!ended) {
        ended = true;
        stopWatching();
        try {
          const outcome = hooks.describeCancel?.() ?? 'client_closed';
          // Clients may hang up once they have the terminal event (Codex does, before the last
          // chunk of the HTTP body): the answer and its usage were delivered, nothing was cut.
          hooks.onEnd(outcome === 'client_closed' && processor.finished ? 'ok' : outcome);
          hooks.abortUpstream(String(error ?? 'client closed'));
        } catch (fault) {
          hooks.onFault?.(fault);
        }
        reader.cancel(error ?? undefined).catch(() => {});
      }
      // The stream itself never errors (see above): the cause is the upstream's to hear, not the pipe's.
      callback(null);
    },
  });
  const period = Math.min(hooks.keepaliveMs ?? Infinity, (hooks.idleTimeoutMs ?? Infinity) / 4);
  if (Number.isFinite(period)) {
    watched = true;
    watchEvery(watch, Math.max(10, period));
  }
  return output;
}

/**
 * `bytes` (whole SSE events, each ending with a blank line) followed by one comment line (`:` and
 * spaces) that brings the write to `size` bytes. SSE readers skip comment lines (WHATWG HTML,
 * "Parsing an event stream"), so clients see the same events; only the write is bigger.
 */
function padded(bytes: Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(Math.max(size, bytes.byteLength + 2));
  out.set(bytes);
  out.fill(0x20, bytes.byteLength + 1, out.length - 1);
  out[bytes.byteLength] = 0x3a;
  out[out.length - 1] = 0x0a;
  return out;
}

/** Same-format streams: bytes forwarded unchanged, in whole events, watched by the format's observer. */
export class PassthroughProcessor implements StreamProcessor {
  readonly #splitter = new SseEventSplitter();
  readonly #observer: StreamObserver;
  readonly #onEvent: (event: Buffer) => void;
  readonly #rewrite: ((event: Buffer) => Buffer | undefined) | undefined;
  readonly keepalive: (() => Uint8Array) | undefined;

  /**
   * `rewrite` may replace single events (a route's model rename); without it bytes pass untouched.
   * `keepalive`: bytes for silences, for upstreams that send none of their own (Bedrock).
   */
  constructor(observer: StreamObserver, rewrite?: (event: Buffer) => Buffer | undefined, keepalive?: () => Uint8Array) {
    this.#observer = observer;
    this.#onEvent = (event) => observer.event(event);
    this.#rewrite = rewrite;
    this.keepalive = keepalive;
  }

  push(chunk: Uint8Array): Uint8Array | undefined {
    const rewrite = this.#rewrite;
    if (!rewrite) return this.#splitter.push(chunk, this.#onEvent);
    const parts: Buffer[] = [];
    let changed = false;
    const complete = this.#splitter.push(chunk, (event) => {
      this.#observer.event(event);
      const replaced = rewrite(event);
      if (replaced) changed = true;
      parts.push(replaced ?? event);
    });
    return changed ? Buffer.concat(parts) : complete;
  }

  end(): { bytes: Uint8Array | undefined; outcome: string } {
    if (this.#observer.finished) return { bytes: undefined, outcome: this.#observer.errored ? 'upstream_error' : 'ok' };
    return { bytes: encoder.encode(this.#observer.failure('The upstream closed the stream before it was complete.')), outcome: 'upstream_truncated' };
  }

  fail(message: string): Uint8Array {
    return encoder.encode(this.#observer.failure(message));
  }

  get finished(): boolean {
    return this.#observer.finished;
  }
}

/**
 * A pull-based web stream over a chunk reader, `first` ahead of what the reader gives: nothing is
 * read before its consumer asks (a fallback's peek hands the peeked event back this way).
 */
export function pullStream(reader: ChunkReader, first?: Uint8Array): ReadableStream<Uint8Array> {
  let pending = first;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (pending !== undefined) {
          controller.enqueue(pending);
          pending = undefined;
          return;
        }
        const next = await reader.read();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

/** A one-chunk stream of bytes already in memory. */
export function bytesStream(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (bytes.byteLength > 0) controller.enqueue(bytes);
      controller.close();
    },
  });
}
