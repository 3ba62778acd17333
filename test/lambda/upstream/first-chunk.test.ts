import { isEarlyRetryableError, streamOrRetry } from '../../../lambda/upstream/first-chunk.ts';
import { requestAbort } from '../../../lambda/upstream/request-abort.ts';
import { fixture } from '../../support/upstream-stub.ts';
import { collect, randomChunks, streamOf } from '../../support/chunking.ts';

const encoder = new TextEncoder();

test('the stream handed on carries every byte, in order, at any chunking', async () => {
  const sse = fixture('anthropic/thinking-tool-stream.sse');
  for (let i = 0; i < 100; i++) {
    const peeked = await streamOrRetry(streamOf(randomChunks(encoder.encode(sse), i)), requestAbort(Date.now() + 10_000), 1_000);
    if ('retry' in peeked) throw new Error(peeked.retry);
    expect((await collect(peeked.stream)).toString('utf8')).toBe(sse);
  }
});

test('a failure before the first chunk, or an empty body, asks for another target', async () => {
  await expect(streamOrRetry(streamOf([], { failAfter: true }), requestAbort(Date.now() + 10_000), 1_000)).resolves.toMatchObject({ retry: expect.stringContaining('reset after headers') });
  await expect(streamOrRetry(streamOf([]), requestAbort(Date.now() + 10_000), 1_000)).resolves.toEqual({ retry: 'empty stream' });
  const silent = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}) });
  await expect(streamOrRetry(silent, requestAbort(Date.now() + 10_000), 50)).resolves.toEqual({ retry: 'no first event in time' });
});

test('an overload or server error standing in for the first event asks for another target; other errors and answers do not', () => {
  const bytes = (text: string) => encoder.encode(text);
  expect(isEarlyRetryableError(bytes('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'))).toBe(true);
  expect(isEarlyRetryableError(bytes('event: response.failed\ndata: {"type":"response.failed","response":{"error":{"code":"server_error","message":"x"}}}\n\n'))).toBe(true);
  expect(isEarlyRetryableError(bytes('data: {"type":"error","code":"rate_limit_exceeded","message":"slow"}\n\n'))).toBe(true);
  // Bedrock's modelTimeoutException as the first frame, after the gateway rendered it.
  expect(isEarlyRetryableError(bytes('event: error\ndata: {"type":"error","error":{"type":"timeout_error","message":"Model timed out"}}\n\n'))).toBe(true);
  expect(isEarlyRetryableError(bytes('event: error\ndata: {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}\n\n'))).toBe(false);
  expect(isEarlyRetryableError(bytes(fixture('anthropic/text-stream.sse')))).toBe(false);
  expect(isEarlyRetryableError(bytes('event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"type":"text_delta","text":"the type was \\"overloaded_error\\""}}\n\n'))).toBe(false);
});
