import type { HandlerResponse } from '../deps.ts';
import { normalizeUserCode, randomSecret } from './codes.ts';
import type { IdentityContext } from './context.ts';
import { cookieName, formOf, setCookie, single, type IdentityRequest } from './http.ts';
import { TICKET_SECONDS } from './limits.ts';
import { clientName, confirmPage, deviceFormPage, messagePage } from './pages.ts';
import type { IdentityKeys } from './secrets.ts';
import { startSignIn } from './sign-in.ts';
import type { DeviceGrant } from './store/device-grants.ts';
import { retryAfter } from './store/rate-limits.ts';

/**
 * The verification page (RFC 8628 §3.3), in two steps, without script:
 * 1. GET /device[?user_code=…]: a form with the code filled in when the link carried one. It is
 *    never submitted for the person (§5.4): they press Continue.
 * 2. POST /device (a code entry: CSRF-checked, limited to 10 per IP per 10 minutes): what is
 *    asking (client, when, from which address) and the choice, continue to the IdP or deny. That
 *    choice carries a signed ticket naming the code, so it is not another code entry.
 * CSRF: a random cookie (SameSite=Strict) whose MAC every form carries, and the browser's own
 * statement that the post came from this origin (Sec-Fetch-Site, else Origin).
 */
const CSRF_COOKIE = 'gw_csrf';
const CSRF_VALUE = /^[A-Za-z0-9_-]{43}$/;

export async function showDevicePage(context: IdentityContext, request: IdentityRequest): Promise<HandlerResponse> {
  const keys = await context.keys();
  const existing = request.cookies[cookieName(request.origin, CSRF_COOKIE)];
  const csrf = existing !== undefined && CSRF_VALUE.test(existing) ? existing : randomSecret();
  const prefill = normalizeUserCode(request.query.get('user_code') ?? undefined);
  return deviceFormPage({
    origin: request.origin,
    csrf: keys.mac('csrf', csrf),
    ...(prefill ? { prefill } : {}),
    ...(context.config.loginNotice ? { notice: context.config.loginNotice } : {}),
    ...(csrf === existing ? {} : { cookies: [setCookie(request.origin, CSRF_COOKIE, csrf, { maxAgeSeconds: 3600, sameSite: 'Strict' })] }),
  });
}

export async function postDevicePage(context: IdentityContext, request: IdentityRequest): Promise<HandlerResponse> {
  const keys = await context.keys();
  const now = context.now();
  const form = formOf(request.event);
  const cookie = request.cookies[cookieName(request.origin, CSRF_COOKIE)];
  const again = (error: string, statusCode: number, extra: Record<string, string> = {}) => {
    const page = deviceFormPage({ origin: request.origin, csrf: cookie ? keys.mac('csrf', cookie) : '', error, statusCode, ...(context.config.loginNotice ? { notice: context.config.loginNotice } : {}) });
    Object.assign(page.headers, extra);
    return page;
  };
  if (!form || cookie === undefined || !fromThisSite(request) || !keys.verifyMac('csrf', cookie, single(form, 'csrf'))) {
    await context.audit.record({ type: 'request_refused', ip: request.ip, reason: 'csrf', via: '/device' }, now);
    return messagePage(request.origin, 'Request refused', 'This form was not sent from this page (or your browser blocks its cookie). Open the sign-in link from your terminal again.', 403);
  }
  const action = single(form, 'action') ?? 'check';
  if (action === 'approve' || action === 'deny') {
    const code = ticketCode(keys, single(form, 'ticket'), cookie, now);
    const grant = code === undefined ? undefined : await pendingGrant(context, keys, code, now);
    if (!grant) return again('This sign-in request has expired or was already answered. Enter the code again, or start over in your terminal.', 400);
    if (action === 'approve') return startSignIn(context, request, 'device', { deviceHash: grant.deviceHash });
    if (await context.grants.deny(grant.deviceHash)) {
      await context.grants.forgetUserCode(grant.userCodeHash);
      await context.audit.record({ type: 'device_denied', ip: request.ip, surface: grant.surface, via: '/device' }, now);
    }
    return messagePage(request.origin, 'Sign-in denied', 'Nothing was signed in. The program that asked will stop waiting.');
  }
  if (!(await context.rates.admit('code_entry', request.ip, now))) {
    await context.audit.record({ type: 'request_refused', ip: request.ip, reason: 'rate_limited', via: '/device' }, now);
    const wait = retryAfter('code_entry', now);
    return again(`Too many codes were entered from your address. Try again in ${Math.ceil(wait / 60)} minutes.`, 429, { 'retry-after': String(wait) });
  }
  const code = normalizeUserCode(single(form, 'user_code'));
  if (code === undefined) return again('That is not a sign-in code: it has 8 letters, like WDJB-MJHT.', 400);
  const grant = await pendingGrant(context, keys, code, now);
  if (!grant) {
    await context.audit.record({ type: 'request_refused', ip: request.ip, reason: 'unknown_code', via: '/device' }, now);
    return again('That code was not recognized: it may have expired. Start the sign-in again in your terminal.', 400);
  }
  const expires = Math.floor(now / 1000) + TICKET_SECONDS;
  return confirmPage({
    origin: request.origin,
    idpOrigin: await context.idp.authorizationOrigin(),
    csrf: keys.mac('csrf', cookie),
    ticket: `${code}.${expires}.${keys.mac('ticket', `${code}|${expires}|${cookie}`)}`,
    userCode: code,
    client: clientName(grant.surface),
    requestedAt: new Date(grant.createdAt),
    ip: grant.ip,
    userAgent: grant.userAgent,
    ...(context.config.loginNotice ? { notice: context.config.loginNotice } : {}),
  });
}

/** The browser says the post came from a page of this origin. */
function fromThisSite(request: IdentityRequest): boolean {
  const site = request.event.headers['sec-fetch-site'];
  if (site !== undefined) return site === 'same-origin';
  return request.event.headers.origin === request.origin;
}

/** The code a confirmation ticket names, when the ticket is this browser's, unaltered and unexpired. */
function ticketCode(keys: IdentityKeys, ticket: string | undefined, cookie: string, now: number): string | undefined {
  const [code, expires, mac] = (ticket ?? '').split('.');
  if (code === undefined || expires === undefined || !/^\d+$/.test(expires) || Number(expires) * 1000 <= now) return undefined;
  return keys.verifyMac('ticket', `${code}|${expires}|${cookie}`, mac) ? code : undefined;
}

async function pendingGrant(context: IdentityContext, keys: IdentityKeys, code: string, now: number): Promise<DeviceGrant | undefined> {
  const grant = await context.grants.byUserCode(keys.mac('user_code', code), now);
  return grant?.status === 'pending' ? grant : undefined;
}
