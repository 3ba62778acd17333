import type { LambdaFunctionURLEvent } from 'aws-lambda';
import type { HandlerResponse } from '../deps.ts';
import { newSessionId } from '../identity/codes.ts';
import type { SignInCompletion } from '../identity/context.ts';
import { formOf, setCookie, single } from '../identity/http.ts';
import type { IdentityDoor } from '../identity/index.ts';
import { messagePage } from '../identity/pages.ts';
import type { AuditLog } from '../identity/store/audit.ts';
import { retryAfter, type RateLimits } from '../identity/store/rate-limits.ts';
import { epochSeconds } from '../identity/store/table.ts';
import type { RequestState } from '../request-state.ts';
import { roleOf, SESSION_COOKIE } from './access.ts';
import { CONSOLE_SESSION_SECONDS, type ConsoleSession, type ConsoleSessions } from './console-sessions.ts';
import { sameOrigin, type AdminRequest } from './http.ts';
import { code, consolePage, escapeHtml, paragraph } from './pages.ts';

/**
 * Signing in to the console (docs/console.md, "Signing in"):
 * - with the IdP: GET /admin/login starts the shared round trip (/oauth/callback); members of
 *   `adminGroups` come back as admins, of `viewerGroups` as viewers, others are refused;
 * - without one: a one-time link (`npm run keys -- console-link`, printed by npm start). Opening
 *   it shows a button; the POST takes the link (once) and opens the session. A link is never
 *   used by a GET, so a mail scanner or a chat preview that fetches it spends nothing.
 * Both are limited to 30 per IP per 10 minutes, and both end in a session cookie
 * (HttpOnly, SameSite=Strict, `__Host-` and Secure on https) that lasts 12 hours.
 */
export interface SignInDeps {
  sessions: ConsoleSessions;
  rates: RateLimits;
  audit: AuditLog;
  identity: IdentityDoor | undefined;
  css: () => string;
  now(): number;
}

const NO_IDP_TEXT = 'This gateway has no identity provider. Sign in with a one-time link: on the gateway\'s machine run';

function sessionCookie(origin: string, cookie: string): string {
  return setCookie(origin, SESSION_COOKIE, cookie, { maxAgeSeconds: CONSOLE_SESSION_SECONDS, sameSite: 'Strict' });
}

/** The browser goes on to the console itself (a relative target: no open redirect). */
function toConsole(cookies: string[]): HandlerResponse {
  return { statusCode: 303, headers: { location: '/admin', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }, body: '', cookies };
}

function limited(deps: SignInDeps, request: AdminRequest, title: string): HandlerResponse {
  const wait = retryAfter('console_sign_in', deps.now());
  const page = consolePage(request.origin, deps.css(), title, paragraph(`Too many sign-ins came from your address. Try again in ${Math.ceil(wait / 60)} minutes.`), 429);
  page.headers['retry-after'] = String(wait);
  return page;
}

const linkHelp = () => `${paragraph(NO_IDP_TEXT)}<pre>${code('npm run keys -- console-link')}</pre>${paragraph('(for a deployed gateway add --stack NAME) and open the link it prints within 10 minutes. npm start prints one when it starts.')}`;

/** GET /admin/login: off to the IdP, or how to sign in without one. */
export async function startLogin(deps: SignInDeps, request: AdminRequest, event: LambdaFunctionURLEvent, state: RequestState): Promise<HandlerResponse> {
  if (!deps.identity) return consolePage(request.origin, deps.css(), 'Sign in to the console', linkHelp());
  if (!(await deps.rates.admit('console_sign_in', request.ip, deps.now()))) return limited(deps, request, 'Sign in to the console');
  return deps.identity.startSignIn(event, state, 'console');
}

/** GET /admin/login/link?token=…: a page with one button (nothing is used until it is pressed). */
export function showLink(deps: SignInDeps, request: AdminRequest): HandlerResponse {
  const token = single(request.query, 'token');
  if (token === undefined) return consolePage(request.origin, deps.css(), 'Sign-in link incomplete', `${paragraph('This link carries no sign-in token. Copy the whole link, or make a new one.')}${linkHelp()}`, 400);
  const body = `${paragraph('This one-time link signs this browser in to the gateway console. It works once, for 10 minutes from when it was made.')}
<form method="post" action="/admin/login/link"><input type="hidden" name="token" value="${escapeHtml(token)}"><button type="submit" class="primary">Sign in to the console</button></form>`;
  return consolePage(request.origin, deps.css(), 'Sign in to the console', body);
}

/** POST /admin/login/link: takes the link (once) and opens a console session. */
export async function useLink(deps: SignInDeps, request: AdminRequest): Promise<HandlerResponse> {
  const now = deps.now();
  const refused = (text: string, status: number) => consolePage(request.origin, deps.css(), 'Not signed in', `${paragraph(text)}${linkHelp()}`, status);
  if (!sameOrigin(request)) {
    await deps.audit.record({ type: 'request_refused', ip: request.ip, reason: 'csrf', via: '/admin/login/link' }, now);
    return refused('This sign-in was not sent from the sign-in page.', 403);
  }
  if (!(await deps.rates.admit('console_sign_in', request.ip, now))) return limited(deps, request, 'Not signed in');
  const token = single(formOf(request.event) ?? new URLSearchParams(), 'token');
  const link = token === undefined ? undefined : await deps.sessions.takeLink(token, now);
  if (!link) {
    await deps.audit.record({ type: 'sign_in_refused', ip: request.ip, surface: 'console', reason: 'link_unknown_used_or_expired', via: '/admin/login/link' }, now);
    return refused('This sign-in link has expired or was already used.', 400);
  }
  const label = 'one-time link';
  const { cookie, session } = await deps.sessions.create({ role: link.role, actor: { via: 'link', label }, ip: request.ip }, now);
  await deps.audit.record({ type: 'sign_in', ip: request.ip, surface: 'console', role: link.role, session: session.id, actor: label, detail: `link made by ${link.createdBy}`, via: '/admin/login/link' }, now);
  return toConsole([sessionCookie(request.origin, cookie)]);
}

/**
 * The console's end of the shared IdP round trip (the identity room's callback runs it once the
 * ID token is verified): the person's groups give the role; a session family is opened for the
 * sign-in (surface `console`), so revoking the person's sessions ends this one too.
 */
export function consoleCompletion(sessions: ConsoleSessions): SignInCompletion {
  return {
    async complete(context, request, _login, person) {
      const now = context.now();
      const role = roleOf(person.groups, { adminGroups: context.config.adminGroups, viewerGroups: context.config.viewerGroups });
      if (!role) {
        await context.audit.record({ type: 'sign_in_refused', sub: person.sub, email: person.email, ip: request.ip, surface: 'console', reason: 'not_in_console_groups', via: '/oauth/callback' }, now);
        return messagePage(request.origin, 'Not a console user', 'Your account is not in a group that may use the gateway console (identity.adminGroups or viewerGroups). Ask your administrator.', 403);
      }
      const family = newSessionId();
      await context.sessions.create({ id: family, person, surface: 'console', ip: request.ip, createdAt: now, expiresAt: epochSeconds(now) + CONSOLE_SESSION_SECONDS });
      const label = person.email ?? person.name ?? person.sub;
      const { cookie } = await sessions.create({ role, actor: { via: 'oidc', label, sub: person.sub, ...(person.email ? { email: person.email } : {}), ...(person.name ? { name: person.name } : {}) }, family, ip: request.ip }, now);
      await context.audit.record({ type: 'sign_in', sub: person.sub, email: person.email, ip: request.ip, surface: 'console', role, session: family, via: '/oauth/callback' }, now);
      return toConsole([sessionCookie(request.origin, cookie)]);
    },
    async fail() {
      // Nothing waits on a console sign-in: the person sees the callback's page.
    },
  };
}

export type { ConsoleSession };
