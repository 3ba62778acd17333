import type { IrError, IrErrorCategory } from './ir.ts';

/**
 * Upstream errors re-enveloped for the client's format. Both coding agents recognise context
 * overflow, overload and rate limits only by these exact forms, so they are mapped precisely.
 * @see docs/wire-formats.md §4.8
 */
const obj = (value: unknown): Record<string, unknown> => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {});

function byStatus(status: number): IrErrorCategory {
  if (status === 401) return 'authentication';
  if (status === 403) return 'permission';
  if (status === 404) return 'not_found';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit';
  if (status === 529 || status === 503) return 'overloaded';
  if (status === 504) return 'timeout';
  if (status >= 500) return 'server';
  return 'invalid_request';
}

const CONTEXT_MESSAGE = /prompt is too long|context (length|window)|maximum context|exceed(s|ed)? context limit/i;

const ANTHROPIC_TYPES: Record<string, IrErrorCategory> = {
  invalid_request_error: 'invalid_request',
  authentication_error: 'authentication',
  permission_error: 'permission',
  not_found_error: 'not_found',
  request_too_large: 'request_too_large',
  rate_limit_error: 'rate_limit',
  billing_error: 'quota',
  overloaded_error: 'overloaded',
  api_error: 'server',
  timeout_error: 'timeout',
};

/** An Anthropic error body (HTTP or the data of an `error` event). */
export function errorFromMessages(status: number | undefined, body: unknown): IrError {
  const error = obj(obj(body).error);
  const message = typeof error.message === 'string' ? error.message : 'The upstream returned an error.';
  let category = ANTHROPIC_TYPES[String(error.type)] ?? (status ? byStatus(status) : 'server');
  if (category === 'invalid_request' && CONTEXT_MESSAGE.test(message)) category = 'context_length';
  return { category, message };
}

const OPENAI_CODES: Record<string, IrErrorCategory> = {
  context_length_exceeded: 'context_length',
  insufficient_quota: 'quota',
  rate_limit_exceeded: 'rate_limit',
  server_is_overloaded: 'overloaded',
  slow_down: 'overloaded',
  invalid_api_key: 'authentication',
  model_not_found: 'not_found',
  server_error: 'server',
};

/** An OpenAI error (HTTP body `{error}`, a `response.failed` error, or a Chat stream `{error}`). */
export function errorFromOpenAi(status: number | undefined, error: unknown): IrError {
  const inner = obj(error);
  const message = typeof inner.message === 'string' ? inner.message : 'The upstream returned an error.';
  // `server_error` is OpenAI's catch-all type: with an HTTP status, the status says more (a 503 is an overload).
  const byType = inner.type === 'server_error' && status !== undefined ? undefined : OPENAI_CODES[String(inner.type)];
  let category = OPENAI_CODES[String(inner.code)] ?? byType ?? (status ? byStatus(status) : 'server');
  if (category === 'invalid_request' && CONTEXT_MESSAGE.test(message)) category = 'context_length';
  return { category, message };
}

const TO_MESSAGES: Record<IrErrorCategory, [number, string]> = {
  invalid_request: [400, 'invalid_request_error'],
  context_length: [400, 'invalid_request_error'],
  authentication: [401, 'authentication_error'],
  permission: [403, 'permission_error'],
  not_found: [404, 'not_found_error'],
  request_too_large: [413, 'request_too_large'],
  rate_limit: [429, 'rate_limit_error'],
  quota: [402, 'billing_error'],
  overloaded: [529, 'overloaded_error'],
  timeout: [504, 'timeout_error'],
  server: [500, 'api_error'],
};

export function errorToMessages(error: IrError): { status: number; type: string; message: string } {
  const [status, type] = TO_MESSAGES[error.category];
  // Claude Code detects context overflow by this prefix and then compacts.
  const message = error.category === 'context_length' && !/^prompt is too long/.test(error.message) ? `prompt is too long: ${error.message}` : error.message;
  return { status, type, message };
}

const TO_OPENAI: Record<IrErrorCategory, [number, string, string | null]> = {
  invalid_request: [400, 'invalid_request_error', null],
  context_length: [400, 'invalid_request_error', 'context_length_exceeded'],
  authentication: [401, 'invalid_request_error', 'invalid_api_key'],
  permission: [403, 'permission_error', null],
  not_found: [404, 'invalid_request_error', 'model_not_found'],
  request_too_large: [413, 'invalid_request_error', 'request_too_large'],
  rate_limit: [429, 'rate_limit_error', 'rate_limit_exceeded'],
  quota: [429, 'insufficient_quota', 'insufficient_quota'],
  overloaded: [503, 'service_unavailable_error', 'server_is_overloaded'],
  timeout: [504, 'server_error', 'timeout'],
  server: [500, 'server_error', 'server_error'],
};

export function errorToResponses(error: IrError): { status: number; type: string; code: string | null; message: string } {
  const [status, type, code] = TO_OPENAI[error.category];
  return { status, type, code, message: error.message };
}

/**
 * The `error.code` of a `response.failed` event (Codex decides retry vs stop on it). An overload
 * mid-answer is sent as `server_error`, which Codex reconnects after: at `server_is_overloaded`
 * inside a stream Codex (0.169) gives up the turn ("Selected model is at capacity. Please try a
 * different model."), though it retries the same overload answered before the stream (HTTP 503).
 * An upstream overloaded mid-answer (Anthropic's overloaded_error, Bedrock's
 * ServiceUnavailableException) is a passing state, as it is before the stream.
 */
export function failedCodeForResponses(error: IrError): string {
  if (error.category === 'overloaded') return 'server_error';
  return TO_OPENAI[error.category][2] ?? 'server_error';
}
