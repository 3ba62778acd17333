import { createHash, timingSafeEqual } from 'node:crypto';
import type { Settings } from '../config/settings.ts';
import { GatewayError, printable } from '../errors.ts';
import { familyOfPath, resolveRoute } from '../routes.ts';
import type { RequestState } from '../request-state.ts';
import type { GatewayMiddleware } from './types.ts';
import type { LambdaFunctionURLEvent } from 'aws-lambda';

/** Longest a request may run when the runtime gives no deadline (the Lambda maximum). */
const NO_DEADLINE_MS = 15 * 60_000;

/**
 * Opens the request: its id, its deadline, its route. Runs first so that every later error
 * knows which format to answer in.
 */
export function requestContext(settings: Settings, options: { identity?: boolean; admin?: boolean } = {}): GatewayMiddleware {
  return {
    before(request) {
      // Lambda must not wait for stray timers or keep-alive sockets after the stream ends;
      // all work that matters is awaited in requestEnd
      // (https://docs.aws.amazon.com/lambda/latest/dg/nodejs-context.html, callbackWaitsForEmptyEventLoop).
      request.context.callbackWaitsForEmptyEventLoop = false;
      const { event, context } = request;
      const now = Date.now();
      const remaining = typeof context.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : NO_DEADLINE_MS;
      const state = openRequestState(event, `req_${(context.awsRequestId ?? crypto.randomUUID()).replaceAll('-', '')}`, now + Math.max(1_000, remaining - settings.deadlineMarginMs));
      if (context.abandon !== undefined) state.abandon = context.abandon;
      context.gateway = state;
      if (context.refusal !== undefined) {
        state.route = routeIfAny(event.requestContext.http.method, event.rawPath, options);
        throw context.refusal;
      }
      if (settings.originSecret !== undefined && !sameSecret(event.headers['x-origin-verify'], settings.originSecret)) {
        throw new GatewayError('permission', 'Requests must use the gateway custom domain.');
      }
      state.route = resolveRoute(event.requestContext.http.method, event.rawPath, options);
    },
  };
}

/**
 * A request's state as it opens: ids, timing, and the request line as the log shows it (method and
 * path, printable and bounded; never the query string, which may carry anything).
 */
export function openRequestState(event: LambdaFunctionURLEvent | undefined, id: string, deadline: number): RequestState {
  const rawPath = event?.rawPath ?? '';
  return {
    id,
    startedAt: Date.now(),
    method: printable(event?.requestContext?.http?.method ?? '', 16),
    path: printable(rawPath, 200),
    family: familyOfPath(rawPath),
    deadline,
    attempts: [],
    pending: [],
    afterResponse: [],
    release: [],
  };
}

function routeIfAny(method: string, rawPath: string, options: { identity?: boolean; admin?: boolean }) {
  try {
    return resolveRoute(method, rawPath, options);
  } catch {
    return undefined;
  }
}

/** Constant-time comparison (of digests, so lengths never leak either). */
function sameSecret(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(presented), digest(expected));
}
