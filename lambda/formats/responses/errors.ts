import type { ErrorKind, GatewayError } from '../../errors.ts';

/**
 * OpenAI error envelope: `{"error":{"message","type","param","code"}}`.
 * @see docs/wire-formats.md §2.5
 * @see https://platform.openai.com/docs/guides/error-codes
 */
const ERROR_TYPE: Record<ErrorKind, [type: string, code: string | null]> = {
  invalid_request: ['invalid_request_error', null],
  authentication: ['invalid_request_error', 'invalid_api_key'],
  permission: ['permission_error', 'model_not_allowed'],
  not_found: ['invalid_request_error', 'not_found'],
  wrong_base_url: ['invalid_request_error', 'wrong_base_url'],
  method_not_allowed: ['invalid_request_error', 'method_not_allowed'],
  request_timeout: ['invalid_request_error', 'request_timeout'],
  length_required: ['invalid_request_error', 'length_required'],
  request_too_large: ['invalid_request_error', 'request_too_large'],
  header_too_large: ['invalid_request_error', 'request_header_fields_too_large'],
  unsupported_media_type: ['invalid_request_error', 'unsupported_media_type'],
  upgrade_required: ['invalid_request_error', 'websocket_not_supported'],
  rate_limit: ['rate_limit_error', 'rate_limit_exceeded'],
  // OpenAI's own answer when an account's quota is used up.
  budget_exhausted: ['insufficient_quota', 'insufficient_quota'],
  client_closed: ['invalid_request_error', 'client_closed'],
  not_implemented: ['invalid_request_error', 'not_implemented'],
  upstream_unreachable: ['server_error', 'upstream_unreachable'],
  upstream_timeout: ['server_error', 'upstream_timeout'],
  overloaded: ['server_error', 'server_is_overloaded'],
  configuration: ['server_error', 'gateway_misconfigured'],
  internal: ['server_error', null],
};

export function responsesErrorBody(error: GatewayError): string {
  const [type, code] = ERROR_TYPE[error.kind];
  return JSON.stringify({
    error: { message: error.message, type, param: error.param ?? null, code: error.code ?? code },
  });
}
