import type { HandlerResponse } from '../deps.ts';
import type { GatewayError } from '../errors.ts';

/**
 * How one try of one target ended: it `served` the answer the client gets (a success, or a
 * failure no other target would change), or it failed before any byte reached the client in a
 * way another target may not (`retry`), with the `error` or `answer` (the upstream's own error,
 * as the client would get it) to give if no other try follows. A try that has no successor never
 * returns `retry`.
 */
export type AttemptOutcome = { served: HandlerResponse } | { retry: string; status?: number; error?: GatewayError; answer?: HandlerResponse };

/** What the upstream could not take, as the response header says it (printable ASCII). */
export function droppedHeader(dropped: readonly string[]): Record<string, string> {
  return dropped.length > 0 ? { 'x-gateway-dropped': dropped.join(', ').replace(/[^\x20-\x7e]/g, '?') } : {};
}
