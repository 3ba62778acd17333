import type { Context } from 'aws-lambda';
import type { KeyRecord } from './auth/key-table.ts';
import type { Family, Route } from './routes.ts';
import type { Usage } from './observability/usage.ts';

/** Everything the middlewares learn about one request, shared with the route handlers. */
export interface RequestState {
  id: string;
  startedAt: number;
  family: Family;
  /** Epoch ms by which the response must be complete. */
  deadline: number;
  route?: Route;
  key?: KeyRecord;
  /** The request body exactly as received (for byte-for-byte passthrough). */
  rawBody?: string;
  body?: Record<string, unknown>;
  model?: string;
  upstream?: string;
  upstreamModel?: string;
  status?: number;
  firstByteAt?: number;
  usage?: Usage;
  /** The usage was (partly) estimated: the stream ended before its final usage. */
  usageEstimated?: boolean;
  /** Set when metering failed (logged; the response was already sent). */
  usageRecordFailed?: string;
  /** Approximate bytes of generated content delivered (streams), for streams cut short. */
  outputBytes?: number;
  /** How the response ended when it was not a plain success (`client_closed`, `upstream_failed`...). */
  outcome?: string;
  /** Set when the key's ceiling clamped the request's output-token limit. */
  cappedOutputTokens?: number;
  /** Features a translation could not carry. */
  dropped?: string[];
  /** For 5xx answers: what went wrong underneath (logged, never sent to the client). */
  cause?: string;
  /** Work that must finish before the invocation ends (Lambda freezes whatever is left). */
  pending: Promise<unknown>[];
  /** Cleanups to run once the response has ended (timers held for the stream's lifetime). */
  release: (() => void)[];
}

export type GatewayContext = Context & { gateway: RequestState };

export function stateOf(context: Context): RequestState {
  return (context as GatewayContext).gateway;
}
