import { bedrockErrorResponse, scrub, streamErrorType } from '../../../../lambda/upstream/bedrock/errors.ts';

const answer = async (status: number, exception: string, message: string, extra: Record<string, string> = {}) => {
  const response = bedrockErrorResponse(status, new Headers({ 'x-amzn-errortype': `${exception}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': 'r-1', ...extra }), JSON.stringify({ message }));
  return { status: response.status, headers: Object.fromEntries(response.headers), body: (await response.json()) as { type: string; error: { type: string; message: string } } };
};

test.each([
  ['ThrottlingException', 429, 429, 'rate_limit_error'],
  ['ServiceUnavailableException', 503, 529, 'overloaded_error'],
  ['ModelNotReadyException', 429, 529, 'overloaded_error'],
  ['ValidationException', 400, 400, 'invalid_request_error'],
  ['AccessDeniedException', 403, 403, 'permission_error'],
  ['ResourceNotFoundException', 404, 404, 'not_found_error'],
  ['ModelTimeoutException', 408, 504, 'timeout_error'],
  ['InternalServerException', 500, 500, 'api_error'],
])('%s (%i) is answered %i %s in the Anthropic envelope', async (exception, status, clientStatus, type) => {
  const { status: got, body, headers } = await answer(status, exception, `Bedrock says ${exception}`);
  expect(got).toBe(clientStatus);
  expect(body).toEqual({ type: 'error', error: { type, message: `Bedrock says ${exception}` } });
  expect(headers['request-id']).toBe('r-1');
});

test('retry-after is kept; ARNs and account ids never reach the client; refused gateway credentials are not detailed', async () => {
  const throttled = await answer(429, 'ThrottlingException', 'Too many requests', { 'retry-after': '3' });
  expect(throttled.headers['retry-after']).toBe('3');
  const denied = await answer(403, 'AccessDeniedException', 'User: arn:aws:sts::123456789012:assumed-role/gw/fn is not authorized to perform: bedrock:InvokeModel on resource: arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-x');
  expect(JSON.stringify(denied.body)).not.toMatch(/123456789012|arn:aws/);
  expect(denied.body.error.message).toBe('User: <resource> is not authorized to perform: bedrock:InvokeModel on resource: <resource>');
  const signature = await answer(403, 'InvalidSignatureException', 'The request signature we calculated does not match... AKIA123');
  expect(signature).toMatchObject({ status: 500, body: { error: { type: 'api_error', message: "The upstream refused the gateway's AWS credentials." } } });
  expect(scrub('account 210987654321 and arn:aws-us-gov:bedrock:x')).toBe('account <account> and <resource>');
});

test('mid-stream exception types map to Anthropic stream error types', () => {
  expect(streamErrorType('throttlingException')).toBe('rate_limit_error');
  expect(streamErrorType('serviceUnavailableException')).toBe('overloaded_error');
  expect(streamErrorType('modelStreamErrorException')).toBe('api_error');
  expect(streamErrorType('somethingNew')).toBe('api_error');
});
