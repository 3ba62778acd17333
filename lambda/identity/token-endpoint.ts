import { hashSecret } from '../auth/key-material.ts';
import type { HandlerResponse } from '../deps.ts';
import type { IdentityContext } from './context.ts';
import { formOf, json, oauthError, single, type IdentityRequest } from './http.ts';
import { DEVICE_GRANT } from './metadata.ts';
import { refreshGrant } from './refresh-grant.ts';
import { mintTokens } from './session-tokens.ts';

/**
 * POST /oauth/token (RFC 6749 §3.2): the device grant (RFC 8628 §3.4) and the refresh grant. No
 * client authentication; unknown parameters are ignored. Answers are never cached.
 */
export async function tokenEndpoint(context: IdentityContext, request: IdentityRequest): Promise<HandlerResponse> {
  const form = formOf(request.event);
  if (!form) return oauthError(400, 'invalid_request', 'Send the request as application/x-www-form-urlencoded.');
  const grantType = single(form, 'grant_type');
  if (grantType === DEVICE_GRANT) return deviceGrant(context, request, form);
  if (grantType === 'refresh_token') return refreshGrant(context, request, form);
  return grantType === undefined ? oauthError(400, 'invalid_request', 'grant_type is required.') : oauthError(400, 'unsupported_grant_type', 'This server issues tokens for the device_code and refresh_token grants.');
}

/**
 * A poll (RFC 8628 §3.4-3.5): `authorization_pending` until the person approves, `slow_down`
 * for a poll sooner than the interval, `access_denied`, `expired_token`; once approved, the
 * first poll to get there takes the tokens (a conditional write) and every later one is refused.
 */
async function deviceGrant(context: IdentityContext, request: IdentityRequest, form: URLSearchParams): Promise<HandlerResponse> {
  const deviceCode = single(form, 'device_code');
  if (deviceCode === undefined) return oauthError(400, 'invalid_request', 'device_code is required.');
  const now = context.now();
  const grant = await context.grants.get(hashSecret(deviceCode), now);
  // Unknown codes look expired: once DynamoDB has deleted an expired grant, the two are the same.
  if (!grant) return oauthError(400, 'expired_token', 'The device code has expired; start the sign-in again.');
  switch (grant.status) {
    case 'pending':
      if (!(await context.grants.poll(grant, now))) return oauthError(400, 'slow_down', `Poll at most every ${grant.interval + 5} seconds.`);
      return oauthError(400, 'authorization_pending', 'Waiting for the sign-in to be approved in the browser.');
    case 'denied':
      return oauthError(400, 'access_denied', 'The sign-in was denied.');
    case 'consumed':
      return oauthError(400, 'invalid_grant', 'This device code was already used.');
    case 'approved':
      break;
  }
  const consumed = await context.grants.consume(grant.deviceHash);
  if (!consumed?.familyId) return oauthError(400, 'invalid_grant', 'This device code was already used.');
  const session = await context.sessions.get(consumed.familyId, now);
  if (!session || session.revokedAt !== undefined) return oauthError(400, 'access_denied', 'The session was ended before its tokens were collected.');
  const answer = await mintTokens(context, session, session.person);
  return json(200, { ...answer, ...(session.person.email ? { email: session.person.email } : {}) });
}
