import type { HandlerResponse } from '../deps.ts';
import { GatewayError } from '../errors.ts';
import type { IdentityContext } from './context.ts';
import type { IdentityRequest } from './http.ts';
import { settingsChecksum, settingsUuid } from './policy.ts';

/**
 * `GET /first/managed/settings` (bearer): Claude Code's managed settings for the person, as its
 * gateway protocol asks (https://code.claude.com/docs/en/llm-gateway-protocol, "Managed
 * settings"): `{uuid, checksum, settings}`, the checksum quoted as the ETag, `304` only in answer
 * to an `If-None-Match` naming it (`*` is answered as if absent: a Claude Desktop session asking
 * whether there are settings at all), `404` when no policy gives the person any. A key without a
 * person has none. Never `x-cc-gateway-version`: with `no-store` it would tell Claude Desktop
 * something the gateway does not mean.
 */
export async function managedSettings(context: IdentityContext, request: IdentityRequest): Promise<HandlerResponse> {
  const principal = request.principal;
  const policy = principal?.person ? await context.policyFor(principal) : undefined;
  const settings = policy?.managedSettings;
  if (settings === undefined) throw new GatewayError('not_found', 'No managed settings apply to you on this gateway.');
  const checksum = settingsChecksum(settings);
  const etag = `"${checksum}"`;
  const headers = { etag, 'cache-control': 'no-store' };
  if (matches(request.event.headers['if-none-match'], etag)) return { statusCode: 304, headers, body: '' };
  return { statusCode: 200, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ uuid: settingsUuid(checksum), checksum, settings }) };
}

/** RFC 9110 §13.1.2, weak comparison, a list allowed; `*` matches nothing here (see above). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
