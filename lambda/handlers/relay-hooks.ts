import type { GatewayDeps } from '../deps.ts';
import type { RequestState } from '../request-state.ts';
import { isTimeout } from '../upstream/call-upstream.ts';
import type { RelayHooks } from '../upstream/relay.ts';
import type { RequestAbort } from '../upstream/request-abort.ts';

/** The relay hooks every upstream stream shares: first byte, cancellation, failure wording, idle limit. */
export function relayHooks(state: RequestState, abort: RequestAbort, signal: AbortSignal, deps: GatewayDeps): Omit<RelayHooks, 'onEnd'> {
  return {
    onFirstByte: () => (state.firstByteAt ??= Date.now()),
    abortUpstream: (reason) => abort.abort(reason),
    describeFailure: () =>
      isTimeout(signal.reason)
        ? { outcome: 'deadline', message: 'The request reached the gateway deadline before the upstream finished.' }
        : { outcome: 'upstream_failed', message: 'The upstream connection failed mid-stream.' },
    idleTimeoutMs: deps.settings.upstreamIdleTimeoutMs,
  };
}
