import type { HandlerResponse } from '../deps.ts';
import { escapeHtml } from '../identity/pages.ts';
import { securityHeaders } from './http.ts';

/**
 * The console's few server-rendered pages (signing in): no script at all, the console's own
 * stylesheet, forms that post only to this origin. The console itself is the static page.
 */
export function consolePage(origin: string, css: string, title: string, body: string, statusCode = 200, cookies?: string[]): HandlerResponse {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="no-referrer"><link rel="icon" href="data:,"><link rel="stylesheet" href="/admin/assets/${escapeHtml(css)}"><title>${escapeHtml(title)} · Agent gateway console</title></head><body><main id="main" class="narrow"><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
  return {
    statusCode,
    headers: { ...securityHeaders(origin), 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' },
    body: html,
    ...(cookies && cookies.length > 0 ? { cookies } : {}),
  };
}

export const paragraph = (text: string) => `<p>${escapeHtml(text)}</p>`;
export const code = (text: string) => `<code>${escapeHtml(text)}</code>`;
export { escapeHtml };
