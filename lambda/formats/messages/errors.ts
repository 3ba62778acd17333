import type { ErrorKind, GatewayError } from '../../errors.ts';

/**
 * Anthropic Messages error envelope: `{"type":"error","error":{"type","message"},"request_id"}`.
 * @see docs/wire-formats.md §1.5
 * @see https://docs.claude.com/en/api/errors
 */
const ERROR_TYPE: Record<ErrorKind, string> = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  permission: 'permission_error',
  not_found: 'not_found_error',
  wrong_base_url: 'invalid_request_error',
  method_not_allowed: 'invalid_request_error',
  request_timeout: 'timeout_error',
  length_required: 'invalid_request_error',
  request_too_large: 'request_too_large',
  header_too_large: 'request_too_large',
  unsupported_media_type: 'invalid_request_error',
  upgrade_required: 'invalid_request_error',
  rate_limit: 'rate_limit_error',
  // What Anthropic's Claude apps gateway answers for a spent spend limit.
  budget_exhausted: 'billing_error',
  client_closed: 'api_error',
  not_implemented: 'invalid_request_error',
  upstream_unreachable: 'api_error',
  upstream_timeout: 'timeout_error',
  overloaded: 'overloaded_error',
  configuration: 'api_error',
  internal: 'api_error',
};

export function messagesErrorBody(error: GatewayError, requestId: string): string {
  return JSON.stringify({
    type: 'error',
    error: { type: ERROR_TYPE[error.kind], message: error.message },
    request_id: requestId,
  });
}

/** The in-stream `error` event that ends a Messages SSE stream after a failure. */
export function messagesErrorEvent(type: string, message: string): string {
  return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message } })}\n\n`;
}
