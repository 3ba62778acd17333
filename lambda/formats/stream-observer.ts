import type { Usage } from '../observability/usage.ts';

/**
 * Watches the events of a relayed stream without changing them: it learns the usage and
 * whether the stream reached its terminal event, and knows how to end the stream in its
 * format when the upstream fails.
 */
export interface StreamObserver {
  /** Called with each complete event's bytes, in order. */
  event(bytes: Buffer): void;
  /** True once the stream carried its terminal event (success or the upstream's own error). */
  readonly finished: boolean;
  /** True when that terminal event was the upstream's own error (logged as `upstream_error`). */
  readonly errored: boolean;
  readonly usage: Usage | undefined;
  /**
   * True once the upstream's final usage arrived (Messages: a `message_delta` with usage;
   * Responses: a terminal event with usage). Until then `usage` is partial or absent, and a
   * stream that ends is charged an estimate (usage/metering.ts).
   */
  readonly usageFinal: boolean;
  /** Approximate bytes of generated content relayed (delta payloads), for streams cut short. */
  readonly outputBytes: number;
  /** The in-stream error event(s) that close the stream after a failure. */
  failure(message: string): string;
}
