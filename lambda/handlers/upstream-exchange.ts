import type { Upstream } from '../config/routing.ts';
import { GatewayError } from '../errors.ts';
import type { GatewayDeps } from '../deps.ts';
import type { RequestState } from '../request-state.ts';
import { callUpstream, isTimeout } from '../upstream/call-upstream.ts';
import { upstreamRequestHeaders } from '../upstream/headers.ts';
import { providerHeaders, upstreamUrl, type Operation } from '../upstream/providers.ts';
import type { RelayHooks } from '../upstream/relay.ts';
import { abandonedError, abandonedFailure, isAbandonReason, requestAbort, type RequestAbort } from '../upstream/request-abort.ts';

/**
 * Sends one request to a (non-simulator) upstream, passthrough or translated alike: the
 * request's abort handle (released when the response ends), the upstream's credential, the
 * forwarded client headers plus the provider's own, and a fresh credential read after a 401.
 */
export async function sendToUpstream(
  state: RequestState,
  deps: GatewayDeps,
  upstream: Upstream,
  clientHeaders: Record<string, string | undefined>,
  request: { operation: Operation; body: string; headers?: Record<string, string>; firstByteTimeoutMs: number | undefined },
): Promise<{ response: Response; abort: RequestAbort }> {
  const abort = requestAbort(state.deadline, state.abandon);
  state.release.push(abort.release);
  const credential = await deps.credentials.get(upstream);
  const response = await callUpstream({
    url: upstreamUrl(upstream, request.operation),
    headers: { ...upstreamRequestHeaders(clientHeaders, upstream.type), ...providerHeaders(upstream, credential, clientHeaders), ...request.headers },
    body: request.body,
    abort,
    firstByteTimeoutMs: request.firstByteTimeoutMs,
    fetch: deps.fetch,
  });
  if (response.status === 401) deps.credentials.invalidate();
  return { response, abort };
}

/** The relay hooks every upstream stream shares: first byte, cancellation, failure wording, idle limit. */
export function relayHooks(state: RequestState, abort: RequestAbort, deps: GatewayDeps): Omit<RelayHooks, 'onEnd'> {
  return {
    onFirstByte: () => (state.firstByteAt ??= Date.now()),
    abortUpstream: (reason) => abort.abort(reason),
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
  };
}

/** A body that failed before it was complete, while the client still waits for a status: 504 or 502. */
export function incompleteBodyError(error: unknown, abort: RequestAbort): GatewayError {
  const reason: unknown = abort.signal.reason;
  if (isAbandonReason(reason)) return abandonedError(reason, error);
  if (isTimeout(abort.signal.reason)) return new GatewayError('upstream_timeout', 'The upstream did not finish in time.', { cause: error });
  return new GatewayError('upstream_unreachable', 'The upstream connection failed before the response was complete.', { cause: error });
}
