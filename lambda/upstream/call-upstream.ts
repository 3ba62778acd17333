import { GatewayError } from '../errors.ts';

export interface UpstreamRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Aborts the call and its body: client gone, deadline reached. */
  signal: AbortSignal;
  /** Longest wait for response headers, or undefined for "until the signal fires". */
  firstByteTimeoutMs: number | undefined;
  fetch: typeof fetch;
}

/** Abort reason used when the upstream sent no headers in time. */
export const FIRST_BYTE_TIMEOUT = 'first-byte-timeout';

/**
 * The single place the gateway calls an upstream. Connection failures become 502 and silence
 * before the first byte becomes 504, both as GatewayErrors so they render in the client's format.
 */
export async function callUpstream(request: UpstreamRequest): Promise<Response> {
  const firstByte = new AbortController();
  const timer =
    request.firstByteTimeoutMs === undefined
      ? undefined
      : setTimeout(() => firstByte.abort(FIRST_BYTE_TIMEOUT), request.firstByteTimeoutMs);
  const signal = AbortSignal.any([request.signal, firstByte.signal]);
  try {
    return await request.fetch(request.url, {
      method: 'POST',
      headers: { ...request.headers, 'content-type': 'application/json' },
      body: request.body,
      signal,
    });
  } catch (error) {
    if (firstByte.signal.aborted || isTimeout(request.signal.reason)) {
      throw new GatewayError('upstream_timeout', 'The upstream did not respond in time.', { cause: error });
    }
    if (request.signal.aborted) throw new GatewayError('internal', 'The request was abandoned.', { cause: error });
    throw new GatewayError('upstream_unreachable', 'The upstream could not be reached.', { cause: error });
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

export function isTimeout(reason: unknown): boolean {
  return reason instanceof DOMException && reason.name === 'TimeoutError';
}
