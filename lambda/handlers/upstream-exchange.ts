import type { Target } from '../config/routing.ts';
import { GatewayError } from '../errors.ts';
import type { GatewayDeps } from '../deps.ts';
import type { RequestState } from '../request-state.ts';
import { callUpstream, isTimeout } from '../upstream/call-upstream.ts';
import { adaptResponse, providerRequest, type Operation, type OutgoingBody } from '../upstream/providers.ts';
import type { RelayHooks } from '../upstream/relay.ts';
import { simulate } from '../upstream/simulator/simulator.ts';
import { abandonedError, abandonedFailure, isAbandonReason, requestAbort, type RequestAbort } from '../upstream/request-abort.ts';

export interface Exchange {
  response: Response;
  abort: RequestAbort;
  /** What the provider could not take (removed from the request). */
  dropped: string[];
}

/**
 * Sends one request to a target, passthrough or translated alike (the simulator only translated, in-process): the request's
 * abort handle (released when the response ends), the upstream's key for this conversation (or
 * its AWS signature), the forwarded client headers plus the provider's own. A key the upstream
 * refused rests (429: for its retry-after; 401/403: longer, and the credentials are read again).
 */
export async function sendToUpstream(
  state: RequestState,
  deps: GatewayDeps,
  target: Target,
  clientHeaders: Record<string, string | undefined>,
  request: { operation: Operation; body: OutgoingBody; streaming: boolean; headers?: Record<string, string>; firstByteTimeoutMs: number | undefined },
): Promise<Exchange> {
  const { upstream } = target;
  const abort = requestAbort(state.deadline, state.abandon);
  state.release.push(abort.release);
  // A simulator told to speak one format gets the translated request in-process, as a provider would over HTTP.
  if (upstream.type === 'simulator') return { response: simulate(upstream.speaks ?? state.family, request.body.parsed, upstream.delayMs, abort.signal), abort, dropped: [] };
  const keys = await deps.credentials.keys(upstream);
  const keyIndex = keys.length > 0 ? deps.health.pickKey(upstream, keys.length, state.stickyKey ?? '') : undefined;
  const call = await providerRequest(upstream, request.operation, target.upstreamModel, request.body, request.streaming, { ...clientHeaders, ...request.headers }, keyIndex === undefined ? undefined : keys[keyIndex]);
  const attempt = state.attempts.at(-1);
  if (attempt && keyIndex !== undefined && keys.length > 1) attempt.key = keyIndex;
  const response = await adaptResponse(upstream, request.operation, await callUpstream({ url: call.url, headers: call.headers, body: call.body, abort, firstByteTimeoutMs: request.firstByteTimeoutMs, fetch: deps.fetch }));
  if (keyIndex !== undefined && (response.status === 429 || response.status === 401 || response.status === 403)) {
    const restedMs = deps.health.restKey(upstream, keyIndex, response.status, retryAfterMs(response.headers));
    if (attempt) attempt.keyRestedMs = restedMs;
    if (response.status !== 429) deps.credentials.invalidate();
  }
  return { response, abort, dropped: call.dropped };
}

/** Statuses another target may well not have: timeouts, rate limits, server errors, Anthropic's overload. */
const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504, 529]);

export function retryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status);
}

/** A failure to reach the upstream or to get its headers in time (not the request's own deadline). */
export function retryableError(error: unknown, state: RequestState): boolean {
  if (!(error instanceof GatewayError)) return false;
  return (error.kind === 'upstream_unreachable' || error.kind === 'upstream_timeout') && Date.now() < state.deadline && !state.abandon?.aborted;
}

/** `retry-after` (seconds or an HTTP date) or `retry-after-ms`, in milliseconds. */
export function retryAfterMs(headers: Headers): number | undefined {
  const ms = Number(headers.get('retry-after-ms'));
  if (Number.isFinite(ms) && ms > 0) return ms;
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** The relay hooks every upstream stream shares: first byte, cancellation, failure wording, idle limit. */
export function relayHooks(state: RequestState, abort: RequestAbort, deps: GatewayDeps): Omit<RelayHooks, 'onEnd'> {
  return {
    onFirstByte: () => (state.firstByteAt ??= Date.now()),
    abortUpstream: (reason) => abort.abort(reason),
    onFault: (error) => (state.cause = error instanceof Error ? error.message : String(error)),
    describeFailure: () => {
      const reason: unknown = abort.signal.reason;
      if (isAbandonReason(reason)) return abandonedFailure(reason);
      if (isTimeout(reason)) return { outcome: 'deadline', message: 'The request reached the gateway deadline before the upstream finished.' };
      return { outcome: 'upstream_failed', message: 'The upstream connection failed mid-stream.' };
    },
    // The runtime says why it cancelled (client gone, stalled, shutdown) through the abort reason.
    describeCancel: () => {
      const reason: unknown = abort.signal.reason;
      return isAbandonReason(reason) ? reason : 'client_closed';
    },
    idleTimeoutMs: deps.settings.upstreamIdleTimeoutMs,
    ...(deps.settings.streamPadBytes > 0 ? { padBytes: deps.settings.streamPadBytes } : {}),
  };
}

/** A body that failed before it was complete, while the client still waits for a status: 504 or 502. */
export function incompleteBodyError(error: unknown, abort: RequestAbort): GatewayError {
  const reason: unknown = abort.signal.reason;
  if (isAbandonReason(reason)) return abandonedError(reason, error);
  if (isTimeout(reason)) return new GatewayError('upstream_timeout', 'The upstream did not finish in time.', { cause: error });
  return new GatewayError('upstream_unreachable', 'The upstream connection failed before the response was complete.', { cause: error });
}
