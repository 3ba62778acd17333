/**
 * The one error type the gateway throws. It carries what every wire format needs to render it
 * (status, a format-neutral kind, a message safe to show) and nothing format-specific: the
 * envelopes live in `formats/<format>/errors.ts`.
 */
export type ErrorKind =
  | 'invalid_request'
  | 'authentication'
  | 'permission'
  | 'not_found'
  | 'wrong_base_url'
  | 'method_not_allowed'
  | 'request_timeout'
  | 'length_required'
  | 'request_too_large'
  | 'header_too_large'
  | 'unsupported_media_type'
  | 'upgrade_required'
  | 'rate_limit'
  | 'budget_exhausted'
  | 'client_closed'
  | 'not_implemented'
  | 'upstream_unreachable'
  | 'upstream_timeout'
  | 'overloaded'
  | 'configuration'
  | 'internal';

export interface GatewayErrorOptions {
  /** Extra response headers, e.g. `allow` on a 405 or `retry-after` on a 429. */
  headers?: Record<string, string>;
  /** OpenAI-style machine code (`invalid_api_key`, `model_not_found`...). */
  code?: string;
  /** The request field at fault, when there is one. */
  param?: string;
  cause?: unknown;
}

const STATUS: Record<ErrorKind, number> = {
  invalid_request: 400,
  authentication: 401,
  permission: 403,
  not_found: 404,
  // Misdirected Request: an endpoint asked for under another base. Not 404, which Claude Code
  // replaces with its own "issue with the selected model" text (seen with 2.1.332), hiding the fix.
  wrong_base_url: 421,
  method_not_allowed: 405,
  request_timeout: 408,
  length_required: 411,
  request_too_large: 413,
  header_too_large: 431,
  unsupported_media_type: 415,
  upgrade_required: 426,
  rate_limit: 429,
  budget_exhausted: 429,
  // nginx's convention for "the client went away first": never sent, only logged.
  client_closed: 499,
  not_implemented: 501,
  upstream_unreachable: 502,
  upstream_timeout: 504,
  overloaded: 503,
  configuration: 500,
  internal: 500,
};

/** Errors no retry can fix: clients are told so with `x-should-retry: false`. */
const FINAL: ReadonlySet<ErrorKind> = new Set<ErrorKind>([
  'invalid_request',
  'authentication',
  'permission',
  'not_found',
  'wrong_base_url',
  'method_not_allowed',
  'length_required',
  'request_too_large',
  'header_too_large',
  // A spent budget frees up only when its period ends: retrying sooner is refused again.
  'budget_exhausted',
  'unsupported_media_type',
  'upgrade_required',
  'not_implemented',
  'configuration',
]);

export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  readonly kind: ErrorKind;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly code: string | undefined;
  readonly param: string | undefined;

  constructor(kind: ErrorKind, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.status = STATUS[kind];
    this.code = options.code;
    this.param = options.param;
    this.headers = { ...options.headers };
    if (FINAL.has(kind)) this.headers['x-should-retry'] = 'false';
  }
}

/** Anything thrown that is not a GatewayError becomes an opaque 500: internals never leak. */
export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  return new GatewayError('internal', 'The gateway failed to handle the request.', { cause: error });
}

/**
 * The 413 both runtimes answer, in the same words: Lambda hands the gateway the whole body, the
 * local server refuses from the announced length (or, for a chunked upload, as soon as it is
 * over the limit, when the full size is not known).
 */
export function bodyTooLarge(size: number | undefined, limit: number): GatewayError {
  const what = size === undefined ? `Request body is larger than ${limit} bytes` : `Request body is ${size} bytes`;
  return new GatewayError('request_too_large', `${what}; the limit is ${limit} bytes.`);
}

/** Client-supplied text safe to echo in an error message: printable ASCII, bounded. */
export function printable(text: string, max = 80): string {
  const clean = text.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > max ? `${clean.slice(0, max)}...` : clean;
}
