import type { LambdaFunctionURLEvent } from 'aws-lambda';
import type { HandlerResponse } from '../deps.ts';
import { oauthErrorBody } from '../formats/oauth/errors.ts';
import { printable } from '../errors.ts';
import type { RequestState } from '../request-state.ts';
import { FORM_BODY_BYTES } from '../routes.ts';
import type { Principal } from './principal.ts';

/** One request to the sign-in room, as its route modules see it. */
export interface IdentityRequest {
  event: LambdaFunctionURLEvent;
  method: string;
  /** The normalized path (repeated slashes collapsed). */
  path: string;
  query: URLSearchParams;
  /** The gateway's public origin (`https://gw.example.com`): what metadata, pages and redirects name. */
  origin: string;
  /** The client's address as the runtime saw it. */
  ip: string;
  /** The client's User-Agent, printable and bounded (recorded, shown on the verification page). */
  userAgent: string;
  cookies: Record<string, string>;
  /** The request id (every answer carries it). */
  requestId: string;
  /** Who is asking, on the endpoints that take a bearer (authenticate resolved it). */
  principal?: Principal;
  /** Work to do once the answer has gone out (awaited before the invocation ends). */
  defer(work: () => Promise<unknown>): void;
}

export function identityRequest(event: LambdaFunctionURLEvent, origin: string, state: Pick<RequestState, 'id' | 'principal' | 'afterResponse'>): IdentityRequest {
  const rawQuery = event.rawQueryString ?? '';
  return {
    event,
    method: event.requestContext.http.method,
    path: event.rawPath.replace(/\/{2,}/g, '/').replace(/(.)\/+$/, '$1'),
    query: new URLSearchParams(rawQuery.length > 4096 ? '' : rawQuery),
    origin,
    ip: event.requestContext.http.sourceIp ?? '',
    userAgent: printable(event.headers['user-agent'] ?? '', 200),
    cookies: parseCookies(event.cookies, event.headers.cookie),
    requestId: state.id,
    ...(state.principal ? { principal: state.principal } : {}),
    defer: (work) => void state.afterResponse.push(work),
  };
}

/**
 * The urlencoded form of a POST (RFC 6749 §3.2, RFC 8628 §3.1, HTML forms), or undefined when
 * the body is no such form or larger than the sign-in routes take. Unknown parameters are
 * kept and ignored by the callers, as the protocol asks.
 */
export function formOf(event: LambdaFunctionURLEvent): URLSearchParams | undefined {
  const raw = event.body ?? '';
  if (raw === '') return new URLSearchParams();
  const type = event.headers['content-type'] ?? '';
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) return undefined;
  if (bodyBytes(event) > FORM_BODY_BYTES) return undefined;
  const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
  return new URLSearchParams(text);
}

/** The size of a request's body as received (base64 bodies decoded). */
export function bodyBytes(event: LambdaFunctionURLEvent): number {
  const raw = event.body ?? '';
  return event.isBase64Encoded ? Math.floor((raw.length * 3) / 4) - (raw.endsWith('==') ? 2 : raw.endsWith('=') ? 1 : 0) : Buffer.byteLength(raw);
}

/** One form or query parameter, or undefined when absent, empty or repeated (RFC 6749 §3.1: no repeats). */
export function single(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  return values.length === 1 && values[0] !== '' ? values[0] : undefined;
}

/** OAuth answers are never cached (RFC 6749 §5.1). */
export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): HandlerResponse {
  return { statusCode, headers: { 'content-type': 'application/json', ...NO_STORE, ...headers }, body: JSON.stringify(body) };
}

/** An OAuth error answer: `{"error","error_description"}` (RFC 6749 §5.2, RFC 8628 §3.5). */
export function oauthError(statusCode: number, error: string, description?: string, headers: Record<string, string> = {}): HandlerResponse {
  return { statusCode, headers: { 'content-type': 'application/json', ...NO_STORE, ...headers }, body: oauthErrorBody(error, description) };
}

export interface CookieOptions {
  maxAgeSeconds: number;
  sameSite: 'Strict' | 'Lax';
}

/**
 * Cookie names carry `__Host-` on https (bound to this origin, no Domain, Path=/, Secure), so a
 * sibling subdomain cannot plant them. Plain http happens only on loopback (npm start).
 */
export function cookieName(origin: string, name: string): string {
  return origin.startsWith('https:') ? `__Host-${name}` : name;
}

export function setCookie(origin: string, name: string, value: string, options: CookieOptions): string {
  const secure = origin.startsWith('https:') ? '; Secure' : '';
  return `${cookieName(origin, name)}=${value}; Max-Age=${options.maxAgeSeconds}; Path=/; HttpOnly; SameSite=${options.sameSite}${secure}`;
}

function parseCookies(listed: string[] | undefined, header: string | undefined): Record<string, string> {
  const cookies: Record<string, string> = {};
  const all = [...(listed ?? []), ...(header ? header.split(';') : [])];
  for (const cookie of all.slice(0, 64)) {
    const at = cookie.indexOf('=');
    if (at <= 0) continue;
    const name = cookie.slice(0, at).trim();
    if (!(name in cookies)) cookies[name] = cookie.slice(at + 1).trim();
  }
  return cookies;
}
