import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { GatewayError } from '../../lambda/errors.ts';
import { errorBody } from '../../lambda/formats/error-body.ts';
import { familyOfPath } from '../../lambda/routes.ts';

const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'HPE_INVALID_EOF_STATE']);

/** How long a connection whose request body was left unread is kept draining before it is closed. */
const LINGER_MS = 2_000;

/**
 * Requests Node refuses before the gateway sees them (a malformed head, headers over Node's
 * 16 KiB limit, a head or request that took too long) are answered here, in the client's format
 * when the path can be read from what arrived, and logged like any request.
 */
export function answerClientError(error: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex, log?: (line: string) => void): void {
  // A client that left (reset, or closed mid-request): nobody to answer; a request already under
  // way logs itself as client_closed.
  if (CLIENT_GONE.has(error.code ?? '') || !socket.writable) {
    socket.destroy();
    return;
  }
  const kind = error.code === 'HPE_HEADER_OVERFLOW' ? 'header_too_large' : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'request_timeout' : 'invalid_request';
  const message =
    kind === 'header_too_large'
      ? 'Request headers are larger than 16 KiB.'
      : kind === 'request_timeout'
        ? 'The request did not arrive in time.'
        : 'The request is not valid HTTP/1.1.';
  const gatewayError = new GatewayError(kind, message);
  const path = requestPath(error.rawPacket);
  const requestId = `req_${randomUUID().replaceAll('-', '')}`;
  const body = errorBody(familyOfPath(path ?? ''), gatewayError, requestId);
  const head = [
    `HTTP/1.1 ${gatewayError.status} ${STATUS_TEXT[gatewayError.status] ?? 'Error'}`,
    'content-type: application/json',
    `content-length: ${Buffer.byteLength(body)}`,
    `request-id: ${requestId}`,
    `x-request-id: ${requestId}`,
    ...Object.entries(gatewayError.headers).map(([name, value]) => `${name}: ${value}`),
    'connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  // The client may not read or close: do not keep the socket past a short drain.
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
  log?.(JSON.stringify({ level: 'info', msg: 'request', requestId, route: undefined, path: path?.slice(0, 200), status: gatewayError.status, outcome: kind, latencyMs: 0 }));
}

/** The most body left unread after a refusal that is still read and discarded (see lingeringClose). */
const DISCARD_BYTES = 1024 * 1024;

/**
 * A request answered without reading its body (a refusal): a short rest of body (at most
 * `DISCARD_BYTES` announced) is read and discarded by Node after the answer, so the connection
 * stays usable for the next request. A longer or unannounced one is not read at all: the socket
 * stops reading (the sender stalls on its own full window, which costs this process nothing,
 * whereas discarding 20 uploads of 30 MB at loopback speed churned 160 MB of buffers) and is
 * closed after `LINGER_MS`. Either way a client still sending after `LINGER_MS` is cut off;
 * closing at once instead could reset the connection and lose the answer.
 */
export function lingeringClose(req: http.IncomingMessage, res: http.ServerResponse): void {
  const afterAnswer = () => {
    if (req.complete) return;
    const timer = setTimeout(() => req.socket.destroy(), LINGER_MS);
    timer.unref();
    req.once('end', () => clearTimeout(timer));
    const announced = Number(req.headers['content-length']);
    // After Node's own 'finish' work, which resumes the request to discard its body.
    if (!(announced <= DISCARD_BYTES)) setImmediate(() => req.socket.pause());
  };
  if (res.writableFinished) afterAnswer();
  else {
    res.once('finish', afterAnswer);
    res.once('close', () => {
      if (!res.writableFinished) req.socket.destroy();
    });
  }
}

/** The path of the request line at the start of what Node had received, if it is there. */
function requestPath(raw: Buffer | undefined): string | undefined {
  if (!raw) return undefined;
  const line = raw.subarray(0, Math.min(raw.length, 8_192)).toString('latin1').split('\r\n', 1)[0] ?? '';
  const match = /^[A-Z]+ (\/\S*) HTTP\/1\.[01]$/.exec(line) ?? /^[A-Z]+ (\/\S*)/.exec(line);
  return match?.[1]?.split('?', 1)[0];
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };
