import type { HandlerResponse } from '../deps.ts';
import type { IdentityRequest } from './http.ts';

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/**
 * RFC 8414 authorization server metadata. Every URL is absolute on the gateway's public origin:
 * Claude Code uses an endpoint only when it is on the origin of the base URL it was given.
 * There is no authorization endpoint (the device flow needs none). The issuer is the origin,
 * or `<origin>/first` when asked at the RFC's path for that issuer.
 */
export function metadata(request: IdentityRequest): HandlerResponse {
  const origin = request.origin;
  const issuer = request.path === '/.well-known/oauth-authorization-server/first' ? `${origin}/first` : origin;
  const body = {
    issuer,
    device_authorization_endpoint: `${origin}/oauth/device_authorization`,
    token_endpoint: `${origin}/oauth/token`,
    revocation_endpoint: `${origin}/oauth/revoke`,
    grant_types_supported: [DEVICE_GRANT, 'refresh_token'],
    response_types_supported: [],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
  };
  return { statusCode: 200, headers: { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' }, body: JSON.stringify(body) };
}
