import { hashSecret } from '../auth/key-material.ts';
import type { HandlerResponse } from '../deps.ts';
import { newUserCode, randomSecret } from './codes.ts';
import type { IdentityContext } from './context.ts';
import { formOf, json, oauthError, single, type IdentityRequest } from './http.ts';
import { DEVICE_CODE_SECONDS, POLL_INTERVAL_SECONDS } from './limits.ts';
import { retryAfter } from './store/rate-limits.ts';

/** `surface` as recorded: a client's stable identifier (`claude_code`), else `unknown`; never refused. */
const SURFACE = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * RFC 8628 §3.1-3.2 device authorization. No client authentication, client_id or scope is
 * required (Claude Code sends only `surface`); unknown parameters are ignored. Costs two
 * conditional writes, so it is limited per IP (30 starts per 10 minutes), answered `slow_down`.
 */
export async function deviceAuthorization(context: IdentityContext, request: IdentityRequest): Promise<HandlerResponse> {
  const form = formOf(request.event);
  if (!form) return oauthError(400, 'invalid_request', 'Send the request as application/x-www-form-urlencoded.');
  const now = context.now();
  if (!(await context.rates.admit('device_authorization', request.ip, now))) {
    await context.audit.record({ type: 'request_refused', ip: request.ip, reason: 'rate_limited', via: '/oauth/device_authorization' }, now);
    const wait = retryAfter('device_authorization', now);
    return oauthError(429, 'slow_down', `Too many sign-ins were started from your address; try again in ${Math.ceil(wait / 60)} minutes.`, { 'retry-after': String(wait) });
  }
  const surfaceParam = single(form, 'surface');
  const surface = surfaceParam !== undefined && SURFACE.test(surfaceParam) ? surfaceParam : 'unknown';
  const keys = await context.keys();
  const deviceCode = randomSecret();
  let userCode: string | undefined;
  // 20^8 codes: a collision with a live one is rare; a few tries make it vanishingly so.
  for (let attempt = 0; attempt < 5 && userCode === undefined; attempt++) {
    const candidate = newUserCode();
    const created = await context.grants.create({ deviceHash: hashSecret(deviceCode), userCodeHash: keys.mac('user_code', candidate), surface, ip: request.ip, userAgent: request.userAgent, createdAt: now });
    if (created) userCode = candidate;
  }
  if (userCode === undefined) return oauthError(503, 'temporarily_unavailable', 'No sign-in code could be allocated; try again.');
  const verification = `${request.origin}/device`;
  const notice = context.config.loginNotice;
  return json(200, {
    device_code: deviceCode,
    user_code: userCode,
    verification_uri: verification,
    verification_uri_complete: `${verification}?user_code=${encodeURIComponent(userCode)}`,
    expires_in: DEVICE_CODE_SECONDS,
    interval: POLL_INTERVAL_SECONDS,
    ...(notice ? { login_notice: notice } : {}),
  });
}
