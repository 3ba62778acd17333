import { SseEventSplitter } from '../formats/sse/event-splitter.ts';
import type { StreamObserver } from '../formats/stream-observer.ts';

export interface RelayHooks {
  observer: StreamObserver;
  /** Called once, when the first bytes go to the client. */
  onFirstByte(): void;
  /** Called once, when the relay ends: 'ok', 'client_closed' or why the upstream failed. */
  onEnd(outcome: string): void;
  /** Cancels the upstream request (the client went away). */
  abortUpstream(reason: string): void;
  /** Classifies a failure: the outcome to log and the client-facing text (never internals). */
  describeFailure(error: unknown): { outcome: string; message: string };
}

const encoder = new TextEncoder();

/**
 * Relays an upstream SSE body to the client byte-for-byte, in whole events.
 *
 * Pull-based with no internal queue (highWaterMark 0): the upstream is read only as fast as the
 * client consumes, so memory per stream stays at one pending event. If the upstream breaks or
 * ends before its terminal event, the stream is closed with the format's error event, never with
 * a truncated frame or plain text.
 */
export function relaySse(source: ReadableStream<Uint8Array>, hooks: RelayHooks): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  const splitter = new SseEventSplitter();
  const onEvent = (event: Buffer) => hooks.observer.event(event);
  let started = false;
  let ended = false;
  const end = (outcome: string) => {
    if (ended) return;
    ended = true;
    hooks.onEnd(outcome);
  };
  const emit = (controller: ReadableStreamDefaultController<Uint8Array>, bytes: Uint8Array) => {
    if (!started) {
      started = true;
      hooks.onFirstByte();
    }
    controller.enqueue(bytes);
  };
  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, outcome: string, message: string) => {
    emit(controller, encoder.encode(hooks.observer.failure(message)));
    controller.close();
    end(outcome);
  };

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          let result: Awaited<ReturnType<typeof reader.read>>;
          try {
            result = await reader.read();
          } catch (error) {
            if (ended) return;
            if (hooks.observer.finished) {
              // The answer was complete; a reset after the terminal event loses nothing.
              controller.close();
              end('ok');
              return;
            }
            const { outcome, message } = hooks.describeFailure(error);
            fail(controller, outcome, message);
            return;
          }
          if (result.done) {
            if (hooks.observer.finished) {
              controller.close();
              end('ok');
            } else {
              fail(controller, 'upstream_truncated', 'The upstream closed the stream before it was complete.');
            }
            return;
          }
          const complete = splitter.push(result.value, onEvent);
          if (complete) {
            emit(controller, complete);
            return;
          }
        }
      },
      cancel(reason) {
        end('client_closed');
        hooks.abortUpstream(String(reason ?? 'client closed'));
        reader.cancel(reason).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
}

/** Reads a whole (non-streamed) body; used for JSON replies and upstream errors. */
export async function readBody(source: Response): Promise<Uint8Array> {
  return new Uint8Array(await source.arrayBuffer());
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
