import { hashSecret, looksLikeAccessToken, looksLikeRefreshToken } from '../auth/key-material.ts';
import type { HandlerResponse } from '../deps.ts';
import type { IdentityContext } from './context.ts';
import { formOf, NO_STORE, oauthError, single, type IdentityRequest } from './http.ts';
import { endSession } from './session-tokens.ts';

/**
 * POST /oauth/revoke (RFC 7009), what Claude Code's /logout calls with the access token and
 * then the refresh token. Possession of either ends the whole session it belongs to (sign-out
 * means all of it): both tokens stop working at once. Unknown, expired and already revoked
 * tokens get the same 200, so the endpoint tells nobody which tokens exist (§2.2).
 */
export async function revocation(context: IdentityContext, request: IdentityRequest): Promise<HandlerResponse> {
  const form = formOf(request.event);
  if (!form) return oauthError(400, 'invalid_request', 'Send the request as application/x-www-form-urlencoded.');
  const token = single(form, 'token');
  if (token === undefined) return oauthError(400, 'invalid_request', 'token is required.');
  const now = context.now();
  const hash = hashSecret(token);
  const family = looksLikeAccessToken(token)
    ? (await context.sessions.getAccess(hash, now))?.family
    : looksLikeRefreshToken(token)
      ? (await context.sessions.getRefresh(hash, now))?.family
      : undefined;
  if (family !== undefined) await endSession(context, family, 'sign_out', { ip: request.ip, via: '/oauth/revoke' });
  return { statusCode: 200, headers: { ...NO_STORE }, body: '' };
}
