import type { TestUser } from './oidc-idp.ts';

/**
 * The device flow from the outside, for tests: the client's requests (form-encoded, as Claude
 * Code sends them: `surface`, no client_id) and a scripted browser (a cookie jar that follows
 * redirects and sends what a browser sends with a form post: Origin and Sec-Fetch-Site). The
 * browser tests drive the same pages with Chromium; this one is for the many tests whose subject
 * is not the page.
 */
export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
  login_notice?: string;
}

export interface TokenAnswer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

const CLIENT_HEADERS = { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'claude-code/2.1.332 (external, cli)' };

/** POST <base>/oauth/device_authorization as Claude Code does (only `surface`). */
export async function startDeviceFlow(url: string, form: Record<string, string> = { surface: 'claude_code' }): Promise<DeviceAuthorization> {
  const response = await fetch(`${url}/oauth/device_authorization`, { method: 'POST', headers: CLIENT_HEADERS, body: new URLSearchParams(form) });
  if (response.status !== 200) throw new Error(`device authorization answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as DeviceAuthorization;
}

/** One POST <base>/oauth/token (form-encoded, no client authentication). */
export async function tokenRequest(url: string, form: Record<string, string>): Promise<TokenAnswer> {
  const response = await fetch(`${url}/oauth/token`, { method: 'POST', headers: CLIENT_HEADERS, body: new URLSearchParams(form) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, headers: response.headers };
}

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export function poll(url: string, deviceCode: string): Promise<TokenAnswer> {
  return tokenRequest(url, { grant_type: DEVICE_GRANT, device_code: deviceCode });
}

export function refresh(url: string, refreshToken: string): Promise<TokenAnswer> {
  return tokenRequest(url, { grant_type: 'refresh_token', refresh_token: refreshToken });
}

export async function revoke(url: string, token: string, hint?: string): Promise<number> {
  const response = await fetch(`${url}/oauth/revoke`, { method: 'POST', headers: CLIENT_HEADERS, body: new URLSearchParams({ token, ...(hint ? { token_type_hint: hint } : {}) }) });
  await response.arrayBuffer();
  return response.status;
}

export interface PageAnswer {
  status: number;
  url: string;
  text: string;
  headers: Headers;
}

/** A cookie jar per origin that follows redirects, sending what browsers send with form posts. */
export class ScriptedBrowser {
  readonly cookies = new Map<string, Map<string, string>>();
  /** Maps every URL the browser is sent to (e.g. a gateway's public https origin onto the loopback http front that serves it). */
  readonly #rewrite: (url: string) => string;

  constructor(rewrite: (url: string) => string = (url) => url) {
    this.#rewrite = rewrite;
  }

  async get(url: string): Promise<PageAnswer> {
    return this.#follow(url, { method: 'GET' });
  }

  /** A form post from a page of `url`'s origin (Origin and Sec-Fetch-Site as a browser sets them). */
  async post(url: string, form: Record<string, string>, from: string = new URL(url).origin): Promise<PageAnswer> {
    const site = new URL(from).origin === new URL(url).origin ? 'same-origin' : 'cross-site';
    return this.#follow(url, { method: 'POST', body: new URLSearchParams(form).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(from).origin, 'sec-fetch-site': site } });
  }

  /** A same-origin form post whose redirect is not followed: where it would lead (an IdP authorization URL a test inspects or hands to someone else). */
  async postWithoutFollowing(url: string, form: Record<string, string>): Promise<Response> {
    const cookie = this.cookieHeader(new URL(url).origin);
    return fetch(url, { method: 'POST', redirect: 'manual', body: new URLSearchParams(form), headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(url).origin, 'sec-fetch-site': 'same-origin', ...(cookie ? { cookie } : {}) } });
  }

  cookieHeader(origin: string): string {
    return [...(this.cookies.get(origin) ?? [])].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async #follow(url: string, init: { method: string; body?: string; headers?: Record<string, string> }): Promise<PageAnswer> {
    let target = this.#rewrite(url);
    let request = init;
    for (let hop = 0; hop < 10; hop++) {
      const origin = new URL(target).origin;
      const jar = this.cookies.get(origin) ?? new Map<string, string>();
      const cookie = this.cookieHeader(origin);
      const response = await fetch(target, { method: request.method, body: request.body, headers: { ...request.headers, ...(cookie ? { cookie } : {}) }, redirect: 'manual' });
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const at = (pair as string).indexOf('=');
        const name = (pair as string).slice(0, at);
        const value = (pair as string).slice(at + 1);
        if (/max-age=0/i.test(line)) jar.delete(name);
        else jar.set(name, value);
      }
      this.cookies.set(origin, jar);
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        await response.arrayBuffer();
        target = this.#rewrite(new URL(location, target).href);
        request = { method: 'GET' };
        continue;
      }
      return { status: response.status, url: target, text: await response.text(), headers: response.headers };
    }
    throw new Error(`too many redirects from ${url}`);
  }
}

/** A hidden field's value in a page. */
export function field(html: string, name: string): string {
  const value = new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
  if (value === undefined) throw new Error(`no field ${name} in:\n${html}`);
  return value.replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code)));
}

/** Step 1 and 2 of the verification page: the code entered, the confirmation page back. */
export async function enterCode(browser: ScriptedBrowser, url: string, userCode: string): Promise<PageAnswer> {
  const form = await browser.get(`${url}/device`);
  return browser.post(`${url}/device`, { csrf: field(form.text, 'csrf'), action: 'check', user_code: userCode });
}

/**
 * The person's whole part: code entered, sign-in confirmed, the IdP's login form filled in
 * (or cancelled), back at the gateway. Returns the last page.
 */
export async function approveInBrowser(browser: ScriptedBrowser, url: string, userCode: string, user: Pick<TestUser, 'sub' | 'password'> | 'cancel'): Promise<PageAnswer> {
  const confirm = await enterCode(browser, url, userCode);
  if (confirm.status !== 200) throw new Error(`code entry answered ${confirm.status}: ${confirm.text}`);
  const login = await browser.post(`${url}/device`, { csrf: field(confirm.text, 'csrf'), ticket: field(confirm.text, 'ticket'), action: 'approve' });
  // Already signed in at the IdP (its session cookie): the IdP sent the browser straight back.
  if (login.url.startsWith(url)) return login;
  const uid = /action="\/interaction\/([^/]+)\/login"/.exec(login.text)?.[1];
  if (!uid) throw new Error(`no IdP login form at ${login.url}:\n${login.text}`);
  const idp = new URL(login.url).origin;
  if (user === 'cancel') return browser.get(`${idp}/interaction/${uid}/abort`);
  return browser.post(`${idp}/interaction/${uid}/login`, { username: user.sub, password: user.password });
}

/** A whole sign-in: device authorization, the browser part, the first successful poll. */
export async function signIn(url: string, user: Pick<TestUser, 'sub' | 'password'>, browser = new ScriptedBrowser()): Promise<Record<string, unknown>> {
  const device = await startDeviceFlow(url);
  const page = await approveInBrowser(browser, url, device.user_code, user);
  if (page.status !== 200) throw new Error(`sign-in page answered ${page.status}: ${page.text}`);
  const answer = await poll(url, device.device_code);
  if (answer.status !== 200) throw new Error(`poll answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}
