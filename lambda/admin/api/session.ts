import { setCookie } from '../../identity/http.ts';
import type { HandlerResponse } from '../../deps.ts';
import { SESSION_COOKIE } from '../access.ts';
import { csrfFor } from '../console-sessions.ts';
import type { AdminContext } from '../context.ts';
import { json } from '../http.ts';

/**
 * GET /admin/api/session: who is signed in, their role, and (console sessions) the CSRF token
 * the page sends with every change; what this gateway has (sign-in, rollups, audit).
 */
export function session(context: AdminContext) {
  const { caller } = context;
  return {
    role: caller.role,
    via: caller.via,
    actor: { label: caller.actor, sub: caller.sub ?? null, email: caller.email ?? null, name: caller.name ?? null },
    ...(caller.session ? { csrfToken: csrfFor(caller.cookie as string), expiresAt: new Date(caller.session.expiresAt * 1000).toISOString(), signedInWith: caller.session.actor.via } : {}),
    features: { signIn: context.identityConfig !== undefined, usage: context.rollups !== undefined, audit: context.audit !== undefined },
    currency: 'USD',
  };
}

/** POST /admin/api/logout: ends the console session (and its sign-in family), clears the cookie. */
export async function logout(context: AdminContext, end: (cookie: string) => Promise<void>): Promise<HandlerResponse> {
  const { caller, request } = context;
  if (caller.cookie !== undefined) {
    await end(caller.cookie);
    await context.record({ type: 'console_signed_out', ...(caller.sub ? { sub: caller.sub } : {}), ...(caller.email ? { email: caller.email } : {}), ...(caller.session ? { session: caller.session.family ?? caller.session.id } : {}) });
  }
  const answer = json(request.origin, 200, { signedOut: true });
  answer.cookies = [setCookie(request.origin, SESSION_COOKIE, '', { maxAgeSeconds: 0, sameSite: 'Strict' })];
  return answer;
}
