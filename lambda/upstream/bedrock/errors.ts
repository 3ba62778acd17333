/**
 * Bedrock's errors in the Anthropic Messages format, with the statuses an Anthropic client acts
 * on. Bedrock names the exception in `x-amzn-errortype` (`ThrottlingException:http://...`) and
 * puts `{"message": ...}` in the body; mid-stream it sends an exception frame with
 * `:exception-type` (`throttlingException`...). Exceptions from
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html#API_runtime_InvokeModel_Errors
 */
interface Mapped {
  status: number;
  type: string;
  /** A fixed message instead of Bedrock's (whose text would not help the client, or leaks). */
  message?: string;
}

const EXCEPTIONS: Record<string, Mapped> = {
  // Retried by clients, and by the gateway's fallbacks.
  throttlingexception: { status: 429, type: 'rate_limit_error' },
  servicequotaexceededexception: { status: 429, type: 'rate_limit_error' },
  serviceunavailableexception: { status: 529, type: 'overloaded_error' },
  modelnotreadyexception: { status: 529, type: 'overloaded_error' },
  modeltimeoutexception: { status: 504, type: 'timeout_error' },
  internalserverexception: { status: 500, type: 'api_error' },
  modelerrorexception: { status: 500, type: 'api_error' },
  modelstreamerrorexception: { status: 500, type: 'api_error' },
  // The request itself: shown as Bedrock words it.
  validationexception: { status: 400, type: 'invalid_request_error' },
  accessdeniedexception: { status: 403, type: 'permission_error' },
  resourcenotfoundexception: { status: 404, type: 'not_found_error' },
  // The gateway's own AWS credentials were refused: not the client's doing, and not to be detailed.
  unrecognizedclientexception: { status: 500, type: 'api_error', message: 'The upstream refused the gateway\'s AWS credentials.' },
  invalidsignatureexception: { status: 500, type: 'api_error', message: 'The upstream refused the gateway\'s AWS credentials.' },
  expiredtokenexception: { status: 500, type: 'api_error', message: 'The upstream refused the gateway\'s AWS credentials.' },
  missingauthenticationtokenexception: { status: 500, type: 'api_error', message: 'The upstream refused the gateway\'s AWS credentials.' },
};

function mapped(exception: string | undefined, status: number): Mapped {
  const known = exception === undefined ? undefined : EXCEPTIONS[exception.toLowerCase()];
  if (known) return known;
  if (status === 429) return { status: 429, type: 'rate_limit_error' };
  if (status === 503) return { status: 529, type: 'overloaded_error' };
  if (status >= 500) return { status: 500, type: 'api_error' };
  return { status, type: status === 403 ? 'permission_error' : status === 404 ? 'not_found_error' : 'invalid_request_error' };
}

/** A Bedrock error answer as an Anthropic one: status, body, and `retry-after` when Bedrock sent one. */
export function bedrockErrorResponse(status: number, headers: Headers, bodyText: string): Response {
  const exception = headers.get('x-amzn-errortype')?.split(':')[0];
  const { status: clientStatus, type, message } = mapped(exception, status);
  const text = message ?? scrub(messageOf(bodyText) ?? `Amazon Bedrock answered ${status}.`);
  const out = new Headers({ 'content-type': 'application/json' });
  for (const name of ['retry-after', 'x-amzn-requestid']) {
    const value = headers.get(name);
    if (value !== null) out.set(name === 'x-amzn-requestid' ? 'request-id' : name, value);
  }
  return new Response(JSON.stringify({ type: 'error', error: { type, message: text } }), { status: clientStatus, headers: out });
}

/** The Anthropic stream error type for a mid-stream exception frame. */
export function streamErrorType(exceptionType: string): string {
  return mapped(exceptionType, 500).type;
}

/** No ARNs or account ids in client-facing text. */
export function scrub(text: string): string {
  return text.replace(/arn:aws[a-z-]*:[^\s"',)]+/g, '<resource>').replace(/\b\d{12}\b/g, '<account>');
}

/** The `message` of a Bedrock error payload (`{"message": ...}`). */
export function messageOf(text: string): string | undefined {
  try {
    const parsed = JSON.parse(text) as { message?: unknown; Message?: unknown };
    const message = parsed.message ?? parsed.Message;
    return typeof message === 'string' ? message : undefined;
  } catch {
    return undefined;
  }
}
