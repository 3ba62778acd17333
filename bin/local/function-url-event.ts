import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { Context, LambdaFunctionURLEvent } from 'aws-lambda';

/** What a Function URL passes as text; every other body is base64. */
const TEXT_BODY = /^(application\/(.+\+)?json|text\/)/i;

/** The payload-2.0 event. The path is passed as received, as a Function URL does: the gateway normalises it. */
export function toEvent(req: http.IncomingMessage, body: Buffer): LambdaFunctionURLEvent {
  const target = req.url ?? '/';
  const query = target.indexOf('?');
  const rawPath = query === -1 ? target : target.slice(0, query);
  const rawQueryString = query === -1 ? '' : target.slice(query + 1);
  const headers: Record<string, string> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = (req.rawHeaders[i] as string).toLowerCase();
    const value = req.rawHeaders[i + 1] as string;
    headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
  }
  const now = new Date();
  const event: LambdaFunctionURLEvent = {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    headers,
    queryStringParameters: rawQueryString ? Object.fromEntries(new URLSearchParams(rawQueryString)) : undefined,
    requestContext: {
      accountId: 'anonymous',
      apiId: 'local',
      // A Function URL's own domain, never the client's Host header: here the address this
      // server listens on (the sign-in metadata names it; docs/sign-in.md, "Public origin").
      domainName: listeningAddress(req),
      domainPrefix: 'local',
      http: { method: req.method ?? 'GET', path: rawPath, protocol: `HTTP/${req.httpVersion}`, sourceIp: req.socket.remoteAddress ?? '', userAgent: headers['user-agent'] ?? '' },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
    body: undefined,
    isBase64Encoded: false,
  };
  return withBody(event, body);
}

/**
 * The event's body once it has been read: the event made at the head (for the preflight) is
 * completed in place rather than made again (its id, time and headers are the same request's).
 */
export function withBody(event: LambdaFunctionURLEvent, body: Buffer): LambdaFunctionURLEvent {
  if (body.length === 0) return event;
  // Compressed bodies are binary whatever their media type: base64, as Lambda passes them.
  const encoding = event.headers['content-encoding'];
  const text = (encoding === undefined || encoding.toLowerCase() === 'identity') && TEXT_BODY.test(event.headers['content-type'] ?? 'application/json');
  event.body = text ? body.toString('utf8') : body.toString('base64');
  event.isBase64Encoded = !text;
  return event;
}

/** `127.0.0.1:8787`, `[::1]:8787`: where the connection arrived (IPv4 clients of a dual-stack socket in their IPv4 form). */
function listeningAddress(req: http.IncomingMessage): string {
  const address = (req.socket.localAddress ?? '127.0.0.1').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  return `${address.includes(':') ? `[${address}]` : address}:${req.socket.localPort ?? 0}`;
}

export function toContext(requestId: string, deadline: number): Context {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'gateway-local',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:gateway-local',
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: 'local',
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}
