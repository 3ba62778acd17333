import { hashSecret, looksLikeRefreshToken } from '../auth/key-material.ts';
import type { HandlerResponse } from '../deps.ts';
import { maySignIn } from './claims.ts';
import type { IdentityContext } from './context.ts';
import { json, oauthError, single, type IdentityRequest } from './http.ts';
import { REFRESH_REUSE_GRACE_MS } from './limits.ts';
import { IdpError } from './oidc-client.ts';
import type { Person } from './principal.ts';
import { endSession, mintTokens } from './session-tokens.ts';
import type { Session } from './store/sessions.ts';

/** How long a concurrent refresh waits for the first one to finish (polling the session). */
const CONCURRENT_WAIT_MS = 5_000;
const CONCURRENT_POLL_MS = 250;

/**
 * The refresh grant, with rotation: each refresh token works once and is replaced. Before new
 * tokens are minted the IdP is asked again with the IdP refresh token sealed in the session: a
 * person the IdP no longer vouches for (removed, disabled, signed out there), or no longer in an
 * allowed group, gets `401 invalid_grant` and the session ends; groups follow the refreshed ID
 * token. The token is claimed (conditionally) before the IdP is asked, so one refresh asks it; a
 * claim is given back when the IdP cannot be reached (503, the client retries).
 *
 * A refresh token used again is a theft signal and ends its whole session, except within
 * REFRESH_REUSE_GRACE_MS of its first use: that is two processes of one client refreshing at
 * once, and the second, once the first is done, gets tokens of its own in the same session.
 */
export async function refreshGrant(context: IdentityContext, request: IdentityRequest, form: URLSearchParams): Promise<HandlerResponse> {
  const token = single(form, 'refresh_token');
  if (token === undefined) return oauthError(400, 'invalid_request', 'refresh_token is required.');
  const now = context.now();
  const refused = async (reason: string, session?: Session, detail?: string) => {
    const person = session?.person;
    await context.audit.record({ type: 'refresh_failed', sub: person?.sub, email: person?.email, ip: request.ip, surface: session?.surface, session: session?.id, reason, detail, via: '/oauth/token' }, context.now());
    // RFC 6749 says 400; the Claude Code gateway protocol asks for 401, its cue to sign in again.
    return oauthError(401, 'invalid_grant', 'The sign-in has ended; sign in again.');
  };
  const hash = looksLikeRefreshToken(token) ? hashSecret(token) : undefined;
  const grant = hash === undefined ? undefined : await context.sessions.getRefresh(hash, now);
  if (hash === undefined || !grant) return refused('unknown_token');
  const session = await context.sessions.get(grant.family, now);
  if (!session) return refused('session_ended');
  if (session.revokedAt !== undefined) return refused('session_revoked', session);
  if (grant.usedAt !== undefined || !(await context.sessions.claimRefresh(hash, now))) return reused(context, request, hash, session, refused);

  const keys = await context.keys();
  const idpToken = session.idpRefresh === undefined ? undefined : keys.open(session.idpRefresh, session.id);
  if (idpToken === undefined) {
    // Sealed with another token key (the identity secret was replaced): the IdP cannot be asked.
    await endSession(context, session.id, 'idp_token_unreadable', { ip: request.ip, via: '/oauth/token' });
    return refused('idp_token_unreadable', session);
  }
  let person: Person = session.person;
  let sealed: string | undefined;
  try {
    const tokens = await context.idp.refresh(idpToken);
    if (tokens.idToken !== undefined) {
      const identified = await context.idp.identify(tokens.idToken, { sub: session.person.sub });
      // An IdP that leaves the groups claim out of refreshed ID tokens keeps the sign-in's groups.
      person = identified.groupsClaimed ? identified.person : { ...identified.person, groups: session.person.groups };
    }
    if (tokens.refreshToken !== undefined) sealed = keys.seal(tokens.refreshToken, session.id);
  } catch (error) {
    if (!(error instanceof IdpError) || error.kind === 'unavailable') {
      await context.sessions.releaseRefresh(hash, now);
      if (!(error instanceof IdpError)) throw error;
      await context.audit.record({ type: 'refresh_failed', sub: session.person.sub, ip: request.ip, session: session.id, reason: 'idp_unavailable', detail: error.message, via: '/oauth/token' }, context.now());
      return oauthError(503, 'temporarily_unavailable', 'The identity provider could not be reached; the current access token works until it expires.', { 'retry-after': '30' });
    }
    await endSession(context, session.id, `idp_${error.kind}`, { ip: request.ip, via: '/oauth/token' });
    return refused(`idp_${error.kind}`, session, error.message);
  }
  if (!maySignIn(person, context.config.allowedGroups)) {
    await endSession(context, session.id, 'not_in_allowed_groups', { ip: request.ip, via: '/oauth/token' });
    return refused('not_in_allowed_groups', { ...session, person });
  }
  if (!(await context.sessions.refreshed(session.id, person, context.now(), sealed))) return refused('session_revoked', session);
  await context.people.seen(person, context.now());
  return json(200, await mintTokens(context, { ...session, person }, person));
}

async function reused(
  context: IdentityContext,
  request: IdentityRequest,
  hash: string,
  session: Session,
  refused: (reason: string, session?: Session) => Promise<HandlerResponse>,
): Promise<HandlerResponse> {
  const now = context.now();
  const usedAt = (await context.sessions.getRefresh(hash, now))?.usedAt;
  if (usedAt === undefined) return oauthError(503, 'temporarily_unavailable', 'A refresh of this sign-in did not finish; try again.', { 'retry-after': '5' });
  if (now - usedAt > REFRESH_REUSE_GRACE_MS) {
    await context.audit.record({ type: 'refresh_reuse', sub: session.person.sub, email: session.person.email, ip: request.ip, surface: session.surface, session: session.id, via: '/oauth/token' }, now);
    await endSession(context, session.id, 'refresh_reuse', { ip: request.ip, via: '/oauth/token' });
    return refused('refresh_reuse', session);
  }
  // Another refresh of the same token: once it has re-checked the IdP, this one shares its result.
  for (const until = Date.now() + CONCURRENT_WAIT_MS; ; ) {
    const current = await context.sessions.get(session.id, context.now());
    if (!current || current.revokedAt !== undefined) return refused('session_revoked', current ?? session);
    if ((current.lastRefreshAt ?? 0) >= usedAt) return json(200, await mintTokens(context, current, current.person));
    if (Date.now() >= until) return oauthError(503, 'temporarily_unavailable', 'A refresh of this sign-in is under way; try again.', { 'retry-after': '5' });
    await new Promise((resolve) => setTimeout(resolve, CONCURRENT_POLL_MS));
  }
}
