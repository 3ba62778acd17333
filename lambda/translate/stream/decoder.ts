import type { IrEvent } from '../ir.ts';

/** One parsed upstream SSE event: its type (event field or JSON `type`) and its data text. */
export interface UpstreamEvent {
  type: string | undefined;
  data: string;
}

/** Turns an upstream format's stream events into IR events, statefully, one event at a time. */
export interface StreamDecoder {
  decode(event: UpstreamEvent): IrEvent[];
}

export function parseData(data: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(data);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
