import { GatewayError } from '../errors.ts';
import type { AbandonReason } from '../request-state.ts';

/**
 * One abort controller per upstream call, with the request's deadline as a plain timer: it is
 * aborted when the runtime abandons the invocation (client gone, client stalled, shutdown), when
 * the upstream sends no headers in time, or when the deadline passes. (`AbortSignal.any` over
 * `AbortSignal.timeout` did the same at 12-14 us per request, docs/performance.md.) `release`
 * clears the timer and the listener once the response has ended.
 */
export interface RequestAbort {
  readonly signal: AbortSignal;
  abort(reason: unknown): void;
  release(): void;
}

export function requestAbort(deadline: number, abandon?: AbortSignal): RequestAbort {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException('The request deadline was reached.', 'TimeoutError')), Math.max(1, deadline - Date.now()));
  timer.unref();
  const onAbandon = () => controller.abort(abandon?.reason);
  if (abandon?.aborted) onAbandon();
  else abandon?.addEventListener('abort', onAbandon, { once: true });
  return {
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    release: () => {
      clearTimeout(timer);
      abandon?.removeEventListener('abort', onAbandon);
    },
  };
}

const ABANDON_REASONS: ReadonlySet<unknown> = new Set<AbandonReason>(['client_closed', 'client_stalled', 'shutdown']);

export function isAbandonReason(reason: unknown): reason is AbandonReason {
  return ABANDON_REASONS.has(reason);
}

/** The error a request abandoned before its answer started ends with (logged; a client still there sees it). */
export function abandonedError(reason: AbandonReason, cause?: unknown): GatewayError {
  if (reason === 'shutdown') return new GatewayError('overloaded', 'The gateway is shutting down; retry the request.', { headers: { 'retry-after': '1' }, cause });
  return new GatewayError('client_closed', 'The client stopped receiving the response.', { cause });
}

/** Outcome and in-stream text for a stream the runtime abandoned mid-way. */
export function abandonedFailure(reason: AbandonReason): { outcome: string; message: string } {
  return { outcome: reason, message: reason === 'shutdown' ? 'The gateway is shutting down; retry the request.' : 'The client stopped receiving the stream.' };
}
