import { createHash } from 'node:crypto';
import type { HandlerResponse } from '../deps.ts';

/**
 * The browser pages of sign-in, rendered on the server: no script at all, one fixed stylesheet
 * allowed by its hash, forms that post only to this origin (and lead on only to the IdP), never
 * framed, never cached, never sending a Referer (the code and the IdP's answer are in URLs).
 */
const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1d1d1f}
h1{font-size:1.4rem}input{font:1.4rem ui-monospace,monospace;letter-spacing:.15em;text-transform:uppercase;padding:.4rem;width:12ch}
button{font:inherit;padding:.5rem 1rem;margin:.5rem .5rem 0 0;cursor:pointer}.notice{border-left:4px solid #888;padding:.2rem .8rem;color:#444}
.error{border-left:4px solid #c00;padding:.2rem .8rem}dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}dt{color:#555}dd{margin:0}
.code{font:1.4rem ui-monospace,monospace;letter-spacing:.15em}code{font:.9rem ui-monospace,monospace;overflow-wrap:anywhere}`;
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function page(origin: string, formTargets: string[], title: string, body: string, statusCode = 200, cookies?: string[]): HandlerResponse {
  const csp = [
    "default-src 'none'",
    `style-src 'sha256-${STYLE_HASH}'`,
    // Chromium applies form-action to the redirect a form post leads to: the IdP must be listed.
    `form-action 'self' ${formTargets.join(' ')}`.trim(),
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
  const headers: Record<string, string> = {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': csp,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'cache-control': 'no-store',
  };
  if (origin.startsWith('https:')) headers['strict-transport-security'] = 'max-age=31536000';
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
  return { statusCode, headers, body: html, ...(cookies && cookies.length > 0 ? { cookies } : {}) };
}

function noticeBlock(notice: string | undefined): string {
  return notice ? `<p class="notice">${escapeHtml(notice)}</p>` : '';
}

function errorBlock(error: string | undefined): string {
  return error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '';
}

export interface DeviceFormPage {
  origin: string;
  csrf: string;
  /** The code from verification_uri_complete: filled in, never submitted for the person. */
  prefill?: string;
  error?: string;
  notice?: string;
  cookies?: string[];
  statusCode?: number;
}

/** Step 1: the person types (or checks) the code their terminal shows and presses Continue. */
export function deviceFormPage(view: DeviceFormPage): HandlerResponse {
  const value = view.prefill ? ` value="${escapeHtml(view.prefill)}"` : '';
  const body = `${noticeBlock(view.notice)}${errorBlock(view.error)}<p>Enter the code your terminal shows to sign in to the gateway.</p>
<form method="post" action="/device"><input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}"><input type="hidden" name="action" value="check">
<p><label for="user_code">Code</label><br><input id="user_code" name="user_code" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="16" required${value}></p>
<button type="submit">Continue</button></form>`;
  return page(view.origin, [], 'Sign in to the gateway', body, view.statusCode, view.cookies);
}

export interface ConfirmPage {
  origin: string;
  idpOrigin: string;
  csrf: string;
  ticket: string;
  userCode: string;
  /** Who asked, as the verification page tells the person: the client, when, from where. */
  client: string;
  requestedAt: Date;
  ip: string;
  userAgent: string;
  notice?: string;
}

/** Step 2: what is being authorized, and the person's choice (continue to the IdP, or deny). */
export function confirmPage(view: ConfirmPage): HandlerResponse {
  const when = view.requestedAt.toISOString().replace('T', ' ').slice(0, 19);
  const body = `${noticeBlock(view.notice)}<p>A sign-in is waiting for code <span class="code">${escapeHtml(view.userCode)}</span>. Continue only if you started it yourself, just now.</p>
<dl><dt>Application</dt><dd>${escapeHtml(view.client)}</dd><dt>Requested</dt><dd>${escapeHtml(when)} UTC</dd><dt>From address</dt><dd>${escapeHtml(view.ip || 'unknown')}</dd><dt>Program</dt><dd>${escapeHtml(view.userAgent || 'unknown')}</dd></dl>
<form method="post" action="/device"><input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}"><input type="hidden" name="ticket" value="${escapeHtml(view.ticket)}">
<button type="submit" name="action" value="approve">Continue to sign in</button><button type="submit" name="action" value="deny">Deny</button></form>`;
  return page(view.origin, [view.idpOrigin], 'Confirm this sign-in', body);
}

/** A final page: signed in, denied, or why not. */
export function messagePage(origin: string, title: string, text: string, statusCode = 200, cookies?: string[]): HandlerResponse {
  return page(origin, [], title, `<p>${escapeHtml(text)}</p>`, statusCode, cookies);
}

/**
 * The device flow's last page. A person who signed in with another client (Claude Code's /login)
 * is shown how to get the login helper too, for Codex and the SDKs with the same identity.
 */
export function signedInPage(origin: string, who: string, surface: string): HandlerResponse {
  const helper =
    surface === 'gateway_login'
      ? ''
      : `<p>Codex, the SDKs and scripts sign in with the login helper:</p><p><code>curl -fsSo ~/.local/bin/gateway-login ${escapeHtml(origin)}/login/helper.mjs &amp;&amp; chmod +x ~/.local/bin/gateway-login</code></p><p>then <code>gateway-login ${escapeHtml(origin)}</code>.</p>`;
  return page(origin, [], 'Signed in', `<p>${escapeHtml(`You are signed in as ${who}. Go back to ${clientName(surface)}: it finishes on its own, and you can close this window.`)}</p>${helper}`);
}

/** How the verification page names the client that asked (the `surface` it sent). */
export function clientName(surface: string): string {
  const known: Record<string, string> = { claude_code: 'Claude Code', gateway_login: 'gateway-login (Codex, SDKs, apiKeyHelper)' };
  return known[surface] ?? (surface ? `${surface} (as the client names itself)` : 'an unnamed client');
}
