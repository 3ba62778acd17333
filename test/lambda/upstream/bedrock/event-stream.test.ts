import { BedrockEventDecoder, eventStreamToSse } from '../../../../lambda/upstream/bedrock/event-stream.ts';
import { collect, randomChunks, streamOf } from '../../../support/chunking.ts';
import { encodeMessage, textEvents } from '../../../support/bedrock-fake.ts';

const chunkFrame = (event: Record<string, unknown>, padding = 'abc') =>
  encodeMessage({ ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' }, Buffer.from(JSON.stringify({ bytes: Buffer.from(JSON.stringify(event)).toString('base64'), p: padding })));
const exceptionFrame = (type: string, message: string) => encodeMessage({ ':exception-type': type, ':content-type': 'application/json', ':message-type': 'exception' }, Buffer.from(JSON.stringify({ message })));

const events = textEvents('Hello — ünïcödé ✓ 你好');
const frames = Buffer.concat(events.map((event) => chunkFrame(event)));
/** What the Anthropic API would have sent: the same events as SSE, without Bedrock's metrics. */
const expected = events
  .map((event) => {
    const { 'amazon-bedrock-invocationMetrics': _metrics, ...rest } = event;
    return `event: ${event.type}\ndata: ${JSON.stringify(rest)}\n\n`;
  })
  .join('');

test('frames decode to the Anthropic SSE, the same at hundreds of random chunk boundaries (mid-prelude, mid-CRC)', async () => {
  for (let seed = 1; seed <= 300; seed++) {
    const out = await collect(eventStreamToSse(streamOf(randomChunks(frames, seed, 23))));
    expect(out.toString('utf8')).toBe(expected);
  }
  // One byte at a time too.
  expect((await collect(eventStreamToSse(streamOf(Array.from(frames, (byte) => Uint8Array.of(byte)))))).toString('utf8')).toBe(expected);
});

test('an event\'s bytes pass unchanged: only message_stop loses Bedrock\'s invocation metrics', () => {
  const event = { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'a "quoted" \\ value' } };
  const raw = JSON.stringify(event).replace(':', ' : ');
  const frame = encodeMessage({ ':event-type': 'chunk', ':message-type': 'event' }, Buffer.from(JSON.stringify({ bytes: Buffer.from(raw).toString('base64') })));
  expect(new BedrockEventDecoder().push(frame)).toBe(`event: content_block_delta\ndata: ${raw}\n\n`);
  const stop = new BedrockEventDecoder().push(chunkFrame(events.at(-1) as Record<string, unknown>));
  expect(stop).toBe('event: message_stop\ndata: {"type":"message_stop"}\n\n');
});

test('an exception frame mid-stream ends the stream with an Anthropic error event, no ARN in it', async () => {
  const bytes = Buffer.concat([...events.slice(0, 3).map((event) => chunkFrame(event)), exceptionFrame('throttlingException', 'Rate exceeded for arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.x'), chunkFrame(events[3] as Record<string, unknown>)]);
  for (const seed of [1, 2, 3, 4, 5]) {
    const out = (await collect(eventStreamToSse(streamOf(randomChunks(bytes, seed, 17))))).toString('utf8');
    expect(out).toBe(`${expected.split('\n\n').slice(0, 3).join('\n\n')}\n\nevent: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"Rate exceeded for <resource>"}}\n\n`);
  }
});

test('a corrupt CRC (prelude or message) or a truncated last frame ends with a clean error event, never a throw', async () => {
  const brokenMessage = Buffer.from(frames);
  brokenMessage[brokenMessage.length - 1] = (brokenMessage[brokenMessage.length - 1] as number) ^ 0xff;
  const out = (await collect(eventStreamToSse(streamOf(randomChunks(brokenMessage, 7, 31))))).toString('utf8');
  expect(out.endsWith('event: error\ndata: {"type":"error","error":{"type":"api_error","message":"The upstream stream was corrupt."}}\n\n')).toBe(true);
  expect(out).not.toContain('message_stop');
  const brokenPrelude = Buffer.from(frames);
  brokenPrelude[9] = (brokenPrelude[9] as number) ^ 0x01;
  expect((await collect(eventStreamToSse(streamOf([brokenPrelude])))).toString('utf8')).toBe('event: error\ndata: {"type":"error","error":{"type":"api_error","message":"The upstream stream was corrupt."}}\n\n');
  const truncated = frames.subarray(0, frames.length - 5);
  expect((await collect(eventStreamToSse(streamOf([truncated])))).toString('utf8')).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"The upstream stream ended in the middle of a message\."\}\}\n\n$/);
});
