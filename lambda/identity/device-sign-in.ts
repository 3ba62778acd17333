import { newSessionId } from './codes.ts';
import type { SignInCompletion } from './context.ts';
import { messagePage, signedInPage } from './pages.ts';
import { sessionEnd } from './session-tokens.ts';

/**
 * The device flow's end of an IdP round trip: the session is created (with the IdP refresh
 * token sealed in it, when the IdP gave one) and the device grant approved for it. The tokens
 * themselves are minted when the client next polls, and handed to that one poll only.
 */
export const deviceSignIn: SignInCompletion = {
  async complete(context, request, login, person, tokens) {
    const now = context.now();
    const grant = await context.grants.get(login.detail.deviceHash ?? '', now);
    const expired = () => messagePage(request.origin, 'Sign-in expired', 'This sign-in request has expired or was already answered. Start again from your terminal.', 400);
    if (!grant || grant.status !== 'pending') return expired();
    const id = newSessionId();
    const keys = await context.keys();
    await context.sessions.create({
      id,
      person,
      surface: grant.surface,
      ip: grant.ip,
      createdAt: now,
      expiresAt: sessionEnd(context, now, tokens.refreshToken !== undefined),
      ...(tokens.refreshToken === undefined ? {} : { idpRefresh: keys.seal(tokens.refreshToken, id) }),
    });
    if (!(await context.grants.approve(grant.deviceHash, { familyId: id, sub: person.sub, ...(person.email ? { email: person.email } : {}) }, now))) {
      await context.sessions.revoke(id, 'unused', now);
      return expired();
    }
    await context.grants.forgetUserCode(grant.userCodeHash);
    await context.audit.record({ type: 'sign_in', sub: person.sub, email: person.email, ip: request.ip, surface: grant.surface, session: id, via: '/oauth/callback' }, now);
    const who = person.email ?? person.name ?? person.sub;
    return signedInPage(request.origin, who, grant.surface);
  },

  async fail(context, _request, login) {
    const grant = await context.grants.get(login.detail.deviceHash ?? '', context.now());
    // The client polling for this grant stops at once (access_denied) instead of waiting out the code.
    if (grant && (await context.grants.deny(grant.deviceHash))) await context.grants.forgetUserCode(grant.userCodeHash);
  },
};
