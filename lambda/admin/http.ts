import type { LambdaFunctionURLEvent } from 'aws-lambda';
import type { HandlerResponse } from '../deps.ts';
import { GatewayError, printable } from '../errors.ts';
import { responsesErrorBody } from '../formats/responses/errors.ts';
import { identityRequest, type IdentityRequest } from '../identity/http.ts';
import type { RequestState } from '../request-state.ts';

/**
 * The console room's view of a request, and its answers. Every answer carries the same security
 * headers (a strict Content-Security-Policy without inline script or style, never framed, never
 * sniffed, never sent with a Referer) and never a CORS header: the console and its API are for
 * this origin only (docs/console.md, "Security").
 */
export type AdminRequest = IdentityRequest;

export function adminRequest(event: LambdaFunctionURLEvent, origin: string, state: Pick<RequestState, 'id' | 'afterResponse'>): AdminRequest {
  return identityRequest(event, origin, state);
}

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

export function securityHeaders(origin: string): Record<string, string> {
  const headers: Record<string, string> = {
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
  };
  if (origin.startsWith('https:')) headers['strict-transport-security'] = 'max-age=31536000';
  return headers;
}

/** A JSON answer of the admin API: never cached. */
export function json(origin: string, statusCode: number, body: unknown, extra: Record<string, string> = {}): HandlerResponse {
  return { statusCode, headers: { ...securityHeaders(origin), 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...extra }, body: JSON.stringify(body) };
}

/** An error of the admin API, in the OpenAI error envelope the gateway answers non-Messages paths with. */
export function errorAnswer(origin: string, error: GatewayError): HandlerResponse {
  return { statusCode: error.status, headers: { ...securityHeaders(origin), 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...error.headers }, body: responsesErrorBody(error) };
}

export const adminError = {
  invalid: (message: string, param?: string) => new GatewayError('invalid_request', message, { code: 'invalid_request', ...(param ? { param } : {}) }),
  notFound: (message = 'There is nothing here.') => new GatewayError('not_found', message, { code: 'not_found' }),
  methodNotAllowed: (method: string, allow: string[]) => new GatewayError('method_not_allowed', `Method ${printable(method, 16)} is not allowed here; allowed: ${allow.join(', ')}.`, { code: 'method_not_allowed', headers: { allow: allow.join(', ') } }),
  unauthenticated: (message = 'Sign in to the console, or send an admin credential as a Bearer token.') => new GatewayError('authentication', message, { code: 'not_signed_in' }),
  forbidden: (message: string, code: string) => new GatewayError('permission', message, { code }),
  unavailable: (message: string) => new GatewayError('configuration', message, { code: 'not_configured' }),
  rateLimited: (retryAfter: number) => new GatewayError('rate_limit', `Too many attempts from your address; try again in ${Math.ceil(retryAfter / 60)} minutes.`, { code: 'rate_limited', headers: { 'retry-after': String(retryAfter) } }),
};

/** Bodies the admin API takes: JSON objects up to the route's allowance (16 KiB, routes.ts). */
export function jsonBody(request: AdminRequest): Record<string, unknown> {
  const raw = request.event.body ?? '';
  if (raw === '') return {};
  const type = request.event.headers['content-type'] ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type)) throw new GatewayError('unsupported_media_type', 'Send the body as application/json.', { code: 'unsupported_media_type' });
  const text = request.event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw adminError.invalid('The body is not valid JSON.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw adminError.invalid('The body must be a JSON object.');
  return parsed as Record<string, unknown>;
}

/**
 * The browser says a request came from a page of this origin: `Sec-Fetch-Site: same-origin`
 * (every current browser sends it), else an `Origin` equal to the gateway's. Neither: refused.
 */
export function sameOrigin(request: AdminRequest): boolean {
  const site = request.event.headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin';
  return request.event.headers.origin === request.origin;
}
