import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { HandlerResponse } from '../deps.ts';
import type { IdentityRequest } from './http.ts';

/**
 * GET /login/helper.mjs: the login helper (gateway-login.mjs beside this module: the file a
 * developer saves as `gateway-login`, docs/sign-in.md "The login helper"). It is read once per
 * instance, at its first request: from beside this module in source runs (npm start), from beside
 * the bundle on Lambda (lib/constructs/gateway-function.ts copies it there). Anyone may fetch it:
 * it holds no secret, costs no store access, and is cached by clients and proxies for an hour.
 */
export const HELPER_FILE = 'gateway-login.mjs';

interface Script {
  body: string;
  etag: string;
}

let script: Script | undefined;

function load(): Script {
  const body = readFileSync(new URL(`./${HELPER_FILE}`, import.meta.url), 'utf8');
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

export function helperScript(request: IdentityRequest): HandlerResponse {
  script ??= load();
  const headers = {
    'content-type': 'text/javascript; charset=utf-8',
    'cache-control': 'public, max-age=3600',
    etag: script.etag,
    'x-content-type-options': 'nosniff',
  };
  const match = request.event.headers['if-none-match'];
  if (match !== undefined && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === script?.etag)) return { statusCode: 304, headers, body: '' };
  return { statusCode: 200, headers, body: script.body };
}
