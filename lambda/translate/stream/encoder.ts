import type { IrError, IrEvent, IrUsage } from '../ir.ts';

/** Writes IR events as one client format's stream, and keeps the complete answer for non-streaming clients. */
export interface StreamEncoder {
  /** Client SSE text for one IR event ('' when the event adds nothing on the wire). */
  encode(event: IrEvent): string;
  /** Ends the stream after a failure the upstream did not report itself. */
  fail(error: IrError): string;
  /** Something harmless to send during long upstream silences. */
  keepalive(): string;
  /** True once the terminal event (success or error) was written. */
  readonly finished: boolean;
  readonly usage: IrUsage;
  /** Set when the stream ended in an error. */
  readonly error: IrError | undefined;
  /** The complete response object (non-streaming clients), valid once finished without error. */
  result(): Record<string, unknown>;
}

export function sse(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}
