import { hashSecret } from '../auth/key-material.ts';
import type { HandlerResponse } from '../deps.ts';
import { maySignIn } from './claims.ts';
import type { IdentityContext } from './context.ts';
import { single, type IdentityRequest } from './http.ts';
import { IdpError, type IdpTokens } from './oidc-client.ts';
import { messagePage } from './pages.ts';
import type { Person } from './principal.ts';
import { clearBinding, redirectUri, sameBrowser } from './sign-in.ts';
import { retryAfter } from './store/rate-limits.ts';

/**
 * GET /oauth/callback: the IdP sends the browser back here, for every purpose (the device flow,
 * the console's sign-in). The round trip is taken by its `state` (single use), checked against
 * the browser that started it, its code redeemed with the PKCE verifier, and the ID token
 * verified (keys, issuer, audience, expiry, nonce). Then the configured groups decide, and the
 * purpose's completion runs. Limited per IP (30 per 10 minutes): each one may cost an IdP call.
 */
export async function callback(context: IdentityContext, request: IdentityRequest): Promise<HandlerResponse> {
  const now = context.now();
  const page = (title: string, text: string, status: number) => messagePage(request.origin, title, text, status, [clearBinding(request.origin)]);
  if (!(await context.rates.admit('callback', request.ip, now))) {
    await context.audit.record({ type: 'request_refused', ip: request.ip, reason: 'rate_limited', via: '/oauth/callback' }, now);
    const answer = page('Too many sign-ins', `Too many sign-ins came back to this address. Try again in ${Math.ceil(retryAfter('callback', now) / 60)} minutes.`, 429);
    answer.headers['retry-after'] = String(retryAfter('callback', now));
    return answer;
  }
  const state = single(request.query, 'state');
  const login = state === undefined ? undefined : await context.grants.takeLogin(hashSecret(state), now);
  if (!login) return page('Sign-in link expired', 'This sign-in link has expired or was already used. Start again from your terminal.', 400);
  const completion = context.completions[login.purpose];
  if (!completion) return page('Sign-in failed', 'This sign-in cannot be completed here.', 400);
  const refuse = async (reason: string, title: string, text: string, status: number, who?: Person, detail?: string) => {
    await completion.fail(context, request, login, reason);
    await context.audit.record({ type: 'sign_in_refused', sub: who?.sub, email: who?.email, ip: request.ip, reason, detail, via: '/oauth/callback' }, context.now());
    return page(title, text, status);
  };
  if (!sameBrowser(request, login)) {
    return refuse('other_browser', 'Sign-in refused', 'This sign-in was started in another browser. Open the sign-in link on the device that showed the code, in the same browser.', 400);
  }
  const idpError = single(request.query, 'error');
  if (idpError !== undefined) {
    const code = /^[a-z_]{1,64}$/.test(idpError) ? idpError : 'error';
    return refuse(`idp_${code}`, 'Not signed in', `Your identity provider did not sign you in (${code}).`, 403);
  }
  const code = single(request.query, 'code');
  if (code === undefined) return refuse('no_code', 'Sign-in failed', 'Your identity provider sent no authorization code.', 400);
  let person: Person;
  let tokens: IdpTokens;
  try {
    tokens = await context.idp.redeemCode(code, login.verifier, redirectUri(request.origin));
    if (tokens.idToken === undefined) throw new IdpError('invalid', 'the IdP answered without an ID token (is "openid" among the scopes?)');
    ({ person } = await context.idp.identify(tokens.idToken, { nonce: login.nonce }));
  } catch (error) {
    if (!(error instanceof IdpError)) throw error;
    const text =
      error.kind === 'unavailable'
        ? 'Your identity provider could not complete the sign-in. Start again from your terminal in a moment; if it keeps failing, your administrator finds the reason in the gateway\'s log.'
        : 'Your identity provider\'s answer could not be verified.';
    return refuse(`idp_${error.kind}`, 'Sign-in failed', text, 502, undefined, error.message);
  }
  if (!maySignIn(person, context.config.allowedGroups)) {
    return refuse('not_in_allowed_groups', 'Not allowed', 'Your account is not in a group that may use this gateway. Ask your administrator.', 403, person);
  }
  await context.people.seen(person, context.now());
  const answer = await completion.complete(context, request, login, person, tokens);
  answer.cookies = [...(answer.cookies ?? []), clearBinding(request.origin)];
  return answer;
}
