import { ConsoleSessions, type ConsoleRole } from '../../lambda/admin/console-sessions.ts';
import { localDynamo } from '../../bin/local/embedded-store.ts';
import { IdentityTable } from '../../lambda/identity/store/table.ts';
import type { Harness } from './gateway-harness.ts';
import type { TestUser } from './oidc-idp.ts';
import type { PageAnswer, ScriptedBrowser } from './sign-in.ts';

/**
 * The console from the outside, for API-level tests: a one-time link made as `keys console-link`
 * makes it, the sign-in a browser does with it (a same-origin form post), and calls with the
 * session cookie and its CSRF token, or with a Bearer credential.
 */
export interface ConsoleSession {
  cookie: string;
  csrf: string;
}

/** A one-time link on the harness's identity table (as `npm run keys -- console-link` makes it). */
export async function consoleLink(harness: Harness, role: ConsoleRole = 'admin', now = Date.now()): Promise<string> {
  const sessions = new ConsoleSessions(new IdentityTable(harness.storeInfo.identityTable, localDynamo(harness.storeInfo.endpoint)));
  const { token } = await sessions.createLink(role, 'test', now);
  return `${harness.url}/admin/login/link?token=${token}`;
}

/** Posts the link's form as the browser would (same origin); the answer, unfollowed. */
export async function postLink(link: string, headers: Record<string, string> = {}): Promise<Response> {
  const url = new URL(link);
  return fetch(`${url.origin}/admin/login/link`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url.origin, 'sec-fetch-site': 'same-origin', ...headers },
    body: new URLSearchParams({ token: url.searchParams.get('token') ?? '' }),
  });
}

/** The `name=value` of a Set-Cookie answer. */
export function cookieOf(response: Response): string {
  const line = response.headers.getSetCookie().find((cookie) => /gw_console=/.test(cookie));
  if (!line) throw new Error(`no console cookie in ${response.status}: ${response.headers.getSetCookie().join(' | ')}`);
  return line.split(';')[0] as string;
}

/** Signs in with a fresh link: the cookie and the session's CSRF token. */
export async function signInWithLink(harness: Harness, role: ConsoleRole = 'admin'): Promise<ConsoleSession> {
  const response = await postLink(await consoleLink(harness, role));
  if (response.status !== 303) throw new Error(`link sign-in answered ${response.status}: ${await response.text()}`);
  const cookie = cookieOf(response);
  const session = await adminCall(harness.url, 'GET', '/session', { cookie });
  return { cookie, csrf: (session.body as { csrfToken: string }).csrfToken };
}

export interface AdminAnswer {
  status: number;
  body: unknown;
  headers: Headers;
}

/**
 * One admin API call. With `session`, the cookie and (for changes) the CSRF token and the
 * headers a same-origin page sends; `headers` adds or overrides.
 */
export async function adminCall(url: string, method: string, path: string, options: { session?: ConsoleSession; cookie?: string; bearer?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<AdminAnswer> {
  const headers: Record<string, string> = {};
  const cookie = options.cookie ?? options.session?.cookie;
  if (cookie) headers.cookie = cookie;
  if (options.session && method !== 'GET') Object.assign(headers, { 'x-csrf-token': options.session.csrf, origin: url, 'sec-fetch-site': 'same-origin' });
  if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  Object.assign(headers, options.headers);
  const response = await fetch(`${url}/admin/api${path}`, { method, headers, ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}) });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // CSV, or an empty answer.
  }
  return { status: response.status, body, headers: response.headers };
}

/**
 * A console sign-in through the IdP, as a browser makes it (the scripted browser follows the
 * redirects and keeps the cookies): /admin/login, the IdP's login form, /oauth/callback. Returns
 * the last page and, when it signed in, the console session.
 */
export async function consoleSignInWithIdp(browser: ScriptedBrowser, url: string, user: Pick<TestUser, 'sub' | 'password'>): Promise<{ page: PageAnswer; session?: ConsoleSession }> {
  const login = await browser.get(`${url}/admin/login`);
  let page = login;
  if (!login.url.startsWith(url)) {
    const uid = /action="\/interaction\/([^/]+)\/login"/.exec(login.text)?.[1];
    if (!uid) throw new Error(`no IdP login form at ${login.url}:\n${login.text}`);
    page = await browser.post(`${new URL(login.url).origin}/interaction/${uid}/login`, { username: user.sub, password: user.password });
  }
  const cookie = browser.cookies.get(new URL(url).origin)?.get('gw_console');
  if (!cookie) return { page };
  const answer = await adminCall(url, 'GET', '/session', { cookie: `gw_console=${cookie}` });
  return { page, session: { cookie: `gw_console=${cookie}`, csrf: (answer.body as { csrfToken: string }).csrfToken } };
}
