import type { GatewayError } from '../../errors.ts';

/**
 * The OAuth 2.0 error body, `{"error","error_description"}` (RFC 6749 §5.2, RFC 8628 §3.5,
 * RFC 7009 §2.2.1): what the sign-in endpoints answer, and what the gateway's own refusals of
 * those endpoints (a body too large, a wrong method) are rendered as.
 */
export function oauthErrorBody(error: string, description?: string): string {
  return JSON.stringify(description === undefined ? { error } : { error, error_description: description });
}

/** A gateway refusal of an OAuth endpoint as an OAuth error body. */
export function oauthGatewayErrorBody(error: GatewayError): string {
  const code = error.status === 503 ? 'temporarily_unavailable' : error.status >= 500 ? 'server_error' : error.status === 429 ? 'slow_down' : 'invalid_request';
  return oauthErrorBody(code, error.message);
}
