import { GatewayError } from '../errors.ts';
import { abandonedError, isAbandonReason, type RequestAbort } from './request-abort.ts';

export interface UpstreamRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Aborts the call and its body: client gone, deadline reached, no headers in time. */
  abort: RequestAbort;
  /** Longest wait for response headers, or undefined for "until the deadline". */
  firstByteTimeoutMs: number | undefined;
  fetch: typeof fetch;
}

/** Abort reason used when the upstream sent no headers in time. */
export const FIRST_BYTE_TIMEOUT = 'first-byte-timeout';

/**
 * The single place the gateway calls an upstream. Connection failures become 502 and silence
 * before the first byte (or past the deadline) becomes 504, both as GatewayErrors so they render
 * in the client's format.
 */
export async function callUpstream(request: UpstreamRequest): Promise<Response> {
  const { abort } = request;
  const timer = request.firstByteTimeoutMs === undefined ? undefined : setTimeout(() => abort.abort(FIRST_BYTE_TIMEOUT), request.firstByteTimeoutMs);
  try {
    return await request.fetch(request.url, {
      method: 'POST',
      headers: { ...request.headers, 'content-type': 'application/json' },
      body: request.body,
      signal: abort.signal,
    });
  } catch (error) {
    const reason: unknown = abort.signal.reason;
    if (reason === FIRST_BYTE_TIMEOUT || isTimeout(reason)) {
      throw new GatewayError('upstream_timeout', 'The upstream did not respond in time.', { cause: error });
    }
    if (isAbandonReason(reason)) throw abandonedError(reason, error);
    if (abort.signal.aborted) throw new GatewayError('internal', 'The request was abandoned.', { cause: error });
    throw new GatewayError('upstream_unreachable', 'The upstream could not be reached.', { cause: error });
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

export function isTimeout(reason: unknown): boolean {
  return reason instanceof DOMException && reason.name === 'TimeoutError';
}
