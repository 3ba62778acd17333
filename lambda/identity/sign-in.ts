import { timingSafeEqual } from 'node:crypto';
import { hashSecret } from '../auth/key-material.ts';
import type { HandlerResponse } from '../deps.ts';
import { codeChallenge, randomSecret } from './codes.ts';
import type { IdentityContext } from './context.ts';
import { cookieName, setCookie, type IdentityRequest } from './http.ts';
import { LOGIN_SECONDS } from './limits.ts';
import type { LoginTransaction } from './store/device-grants.ts';

/** The cookie that ties an IdP round trip to the browser that started it. */
const BINDING_COOKIE = 'gw_login';

/** Where the IdP sends the browser back: the one redirect URI the admin registers. */
export function redirectUri(origin: string): string {
  return `${origin}/oauth/callback`;
}

/**
 * Starts a round trip through the IdP (authorization code + PKCE S256, state, nonce) for a
 * purpose (`device`, or another room's), and sends the browser there. What comes back at
 * /oauth/callback must carry this `state` (single use), the browser-binding cookie set here,
 * and an ID token with this nonce. The state, the PKCE verifier and the nonce are random per
 * round trip; only their digests or this server's copy are stored, never in the browser.
 */
export async function startSignIn(context: IdentityContext, request: IdentityRequest, purpose: string, detail: Record<string, string>): Promise<HandlerResponse> {
  const state = randomSecret();
  const nonce = randomSecret();
  const verifier = randomSecret();
  const binding = randomSecret();
  const url = await context.idp.authorizationUrl({ redirectUri: redirectUri(request.origin), state, nonce, challenge: codeChallenge(verifier) });
  await context.grants.beginLogin(hashSecret(state), { purpose, detail, verifier, nonce, bindingHash: hashSecret(binding), ip: request.ip, createdAt: context.now() });
  return {
    // 303: the browser follows a form post's answer with a GET.
    statusCode: 303,
    headers: { location: url.href, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' },
    // Lax: sent on the IdP's top-level redirect back to the callback, not on cross-site subrequests.
    cookies: [setCookie(request.origin, BINDING_COOKIE, binding, { maxAgeSeconds: LOGIN_SECONDS, sameSite: 'Lax' })],
    body: '',
  };
}

/**
 * The callback came to the browser that started the round trip. Without this, someone could
 * start a sign-in for their own device code, send the IdP link to a victim, and receive tokens
 * for the victim's account once the victim's browser came back from the IdP.
 */
export function sameBrowser(request: IdentityRequest, login: LoginTransaction): boolean {
  const cookie = request.cookies[cookieName(request.origin, BINDING_COOKIE)];
  if (cookie === undefined) return false;
  const presented = Buffer.from(hashSecret(cookie));
  const expected = Buffer.from(login.bindingHash);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

/** Clears the binding cookie once its round trip is over. */
export function clearBinding(origin: string): string {
  return setCookie(origin, BINDING_COOKIE, '', { maxAgeSeconds: 0, sameSite: 'Lax' });
}
