import type { Context } from 'aws-lambda';
import type { KeyRecord } from './auth/key-table.ts';
import type { GatewayError } from './errors.ts';
import type { PersonPolicy, Principal } from './identity/principal.ts';
import type { Family, Route } from './routes.ts';
import type { Usage } from './observability/usage.ts';

/** One try of one target (a route with fallbacks may try several). */
export interface Attempt {
  upstream: string;
  /** The model the upstream was asked for, when it differs from the client's. */
  model?: string;
  /** Which of the upstream's keys (by position, never by value) when it has several. */
  key?: number;
  /** How long that key now rests, when the upstream refused it. */
  keyRestedMs?: number;
  status?: number;
  /** Why the try failed without a status (unreachable, no headers in time, reset, early error). */
  error?: string;
  ms: number;
}

/**
 * What one try of a target writes into the request's state (forward.ts). A try that hands over to
 * the next is forgotten, so that the request is logged and metered as the try that answers: a
 * field that one try sets and another may not belongs here, and is cleared before every try.
 */
export interface TryState {
  upstream?: string;
  upstreamModel?: string;
  /** The target's model name as the routing config gives it (config/routing.ts Target.routedModel). */
  routedModel?: string;
  /** The upstream answered the model name with a success: it serves a model of that name. */
  modelAccepted?: boolean;
  status?: number;
  firstByteAt?: number;
  usage?: Usage;
  /** The upstream reported its final usage (a complete answer, or a stream's closing usage): `usage` is whole, nothing is estimated. */
  usageFinal?: boolean;
  /** Approximate bytes of generated content delivered (streams), for streams cut short. */
  outputBytes?: number;
  /** How the response ended when it was not a plain success (`client_closed`, `upstream_failed`...). */
  outcome?: string;
  /** Features a translation could not carry. */
  dropped?: string[];
}

/** Every TryState field: one added there and not here does not compile, so no try's field outlives it. */
const TRY_FIELDS: { readonly [Field in keyof TryState]-?: true } = { upstream: true, upstreamModel: true, routedModel: true, modelAccepted: true, status: true, firstByteAt: true, usage: true, usageFinal: true, outputBytes: true, outcome: true, dropped: true };

/** Clears what an earlier try wrote (a stream's status before its first event turned out an error, a JSON error's first byte...). */
export function forgetTry(state: TryState): void {
  for (const field of Object.keys(TRY_FIELDS) as (keyof TryState)[]) delete state[field];
}

/** Everything the middlewares learn about one request, shared with the route handlers (what one try of a target sets: TryState). */
export interface RequestState extends TryState {
  id: string;
  startedAt: number;
  /** The request line as logged: method and path (printable, bounded; no query string). */
  method: string;
  path: string;
  family: Family;
  /** Epoch ms by which the response must be complete. */
  deadline: number;
  /** Aborted by the runtime when the invocation must stop early (see RuntimeSignals). */
  abandon?: AbortSignal;
  route?: Route;
  key?: KeyRecord;
  /** Who the request acts for (an issued key, or a signed-in person); `key` above is `principal.key`. */
  principal?: Principal;
  /** The person's policy (models, caps, pools), on the routes that apply it; absent for a request that acts for no person. */
  policy?: PersonPolicy;
  /** The request body exactly as received (for byte-for-byte passthrough). */
  rawBody?: string;
  body?: Record<string, unknown>;
  model?: string;
  /** What keeps this conversation on one target and key (see upstream/target-order.ts). */
  stickyKey?: string;
  /** Every target tried, in order (logged when there was more than one, or a key was rested). */
  attempts: Attempt[];
  /** When the response had been handed to the runtime in full (the client's latency ends here). */
  respondedAt?: number;
  /** How long the usage write took (on Lambda it runs before the invocation ends). */
  usageWriteMs?: number;
  /** What the request cost, in micro-dollars, and where its price came from (`fallback`: no price known). */
  costMicroUsd?: number;
  priceSource?: 'config' | 'table' | 'fallback';
  /** Headers every answer to this request carries (the key's budget, for Claude Code). */
  answerHeaders?: Record<string, string>;
  /** The usage was (partly) estimated: the stream ended before its final usage. */
  usageEstimated?: boolean;
  /** Set when metering failed (logged; the response was already sent). */
  usageRecordFailed?: string;
  /** Set when the key's ceiling clamped the request's output-token limit. */
  cappedOutputTokens?: number;
  /** For 5xx answers: what went wrong underneath (logged, never sent to the client). */
  cause?: string;
  /** Work that must finish before the invocation ends (Lambda freezes whatever is left). */
  pending: Promise<unknown>[];
  /** Work that can wait for the response: started once it has ended, then awaited with `pending`. */
  afterResponse: (() => Promise<unknown>)[];
  /** Gives back the key's slot for requests in flight (enforce-limits.ts), once the request's usage is recorded. */
  releaseLease?: () => Promise<void>;
  /** Cleanups to run once the response has ended (timers held for the stream's lifetime). */
  release: (() => void)[];
}

/** Why a runtime abandons an invocation: the client left, stopped reading, or the server is stopping. */
export type AbandonReason = 'client_closed' | 'client_stalled' | 'shutdown';

/**
 * What a runtime that can see the client connection adds to the invocation context. The local
 * server (bin/local) does; Lambda cannot see disconnects, so there none is ever set.
 */
export interface RuntimeSignals {
  /** Aborted with an AbandonReason when the invocation must stop early. */
  abandon?: AbortSignal;
  /** An answer decided before the handler ran (body too large, body timeout, overload, a header-time 401). */
  refusal?: GatewayError;
  /** The runtime's budget for what the handler makes of the body (absent on Lambda, whose platform caps the event at 6 MB). */
  bodyMemory?: BodyMemory;
}

/**
 * The local server bounds the memory request bodies hold at once. It counts the bytes it receives;
 * what the handler makes of them (a decoded Content-Encoding, the parsed JSON) is charged here,
 * as it is made, and given back with the rest when the invocation ends.
 */
export interface BodyMemory {
  /** Largest body a Content-Encoding may decode to. */
  maxDecodedBytes: number;
  /** Takes `bytes` more for this invocation; false (nothing taken) when the budget is spent: the request is refused 503. */
  take(bytes: number): boolean;
}

/**
 * What a runtime that reads request bodies itself learns from the request head alone, before a
 * byte of body is read (gateway.ts `preflight`).
 */
export interface Preflight {
  /** The answer, when the head decides it (no route, a missing or bad key): the body is never read. */
  refusal?: GatewayError;
  /** The request carries an accepted key. */
  authenticated: boolean;
  /**
   * The most body the request may bring: the body limit on an authenticated API route; 0 on an
   * open route (the probe, the WebSocket refusal), whose body is not read at all. A route that
   * takes an unauthenticated form post would name a small fixed allowance here.
   */
  maxBodyBytes: number;
}

export type GatewayContext = Context & RuntimeSignals & { gateway: RequestState };

export function stateOf(context: Context): RequestState {
  return (context as GatewayContext).gateway;
}

/** The response has ended: runs its cleanups and starts the work that waited for it (awaited with `pending`). */
export function responseEnded(state: RequestState): void {
  for (const release of state.release) release();
  for (const start of state.afterResponse) state.pending.push(start());
}
