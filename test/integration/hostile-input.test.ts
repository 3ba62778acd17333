import zlib from 'node:zlib';
import { logOf, startGateway, type Harness } from '../support/gateway-harness.ts';
import { fixture, sendJson, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';

/** Inputs built to break a gateway: each gets a clear 4xx in the client's format, and nothing reaches the upstream. */
let ant: UpstreamStub;
let oai: UpstreamStub;
let gateway: Harness;
let key: string;

beforeAll(async () => {
  [ant, oai] = await Promise.all([startUpstream(sendJson(200, JSON.parse(fixture('anthropic/text.json')))), startUpstream(sendJson(200, JSON.parse(fixture('openai/text.json'))))]);
  gateway = await startGateway({
    config: {
      upstreams: { ant: { type: 'anthropic', baseUrl: ant.url }, oai: { type: 'openai', baseUrl: `${oai.url}/v1` } },
      routes: [
        { model: 'gpt-via-ant', upstream: 'ant' },
        { model: 'claude-via-oai', upstream: 'oai' },
        { model: 'claude-*', upstream: 'ant' },
        { model: 'gpt-*', upstream: 'oai' },
      ],
    },
  });
  ({ key } = await gateway.issueKey());
});

afterAll(async () => {
  await gateway.close();
  await Promise.all([ant.close(), oai.close()]);
});

function post(path: string, body: string | Buffer, headers: Record<string, string> = {}) {
  return fetch(`${gateway.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body });
}

type ErrorBody = { type?: string; error: { type: string; message: string; code?: string } };
const errorOf = async (response: Response): Promise<ErrorBody> => (await response.json()) as ErrorBody;
const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const calls = () => ant.requests.length + oai.requests.length;

test.each([
  ['/first/v1/messages', 'claude-sonnet-5', 'messages'],
  ['/first/v1/messages', 'claude-via-oai', 'messages'],
  ['/first/v1/messages/count_tokens', 'claude-sonnet-5', 'messages'],
  ['/second/v1/responses', 'gpt-5.5', 'responses'],
  ['/second/v1/responses', 'gpt-via-ant', 'responses'],
])('100,000-deep JSON on %s (%s) is a 400 in the client\'s format, not a 500', async (path, model, family) => {
  const before = calls();
  const body =
    family === 'messages'
      ? `{"model":"${model}","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"t","input_schema":${deep(100_000).replace('[]', '{}')}}]}`
      : `{"model":"${model}","input":[{"role":"user","content":${deep(100_000)}}]}`;
  const response = await post(path, body);
  expect(response.status).toBe(400);
  expect(response.headers.get('x-should-retry')).toBe('false');
  const { type, error } = await errorOf(response);
  expect(type).toBe(family === 'messages' ? 'error' : undefined);
  expect(error).toMatchObject({ type: 'invalid_request_error', message: 'Request body nests deeper than 128 levels.' });
  expect(calls()).toBe(before);
});

test('a 100 KB model name is refused, and the log line stays short', async () => {
  const response = await post('/first/v1/messages', JSON.stringify({ model: `claude-${'x'.repeat(100_000)}`, max_tokens: 5, messages: [] }));
  expect(response.status).toBe(400);
  expect((await errorOf(response)).error.message).toBe('model: String should have at most 256 characters');
  const requestId = response.headers.get('request-id') as string;
  await logOf(gateway, requestId);
  const line = gateway.rawLogs.find((entry) => entry.includes(requestId)) as string;
  expect(line.length).toBeLessThan(2_000);
});

test.each(['model', 'stream', 'max_tokens'])('a duplicated "%s" is refused before anything is routed', async (member) => {
  const before = calls();
  const value = member === 'model' ? '"claude-haiku-4-5"' : member === 'stream' ? 'false' : '10';
  const body = `{"model":"claude-sonnet-5","max_tokens":5,"stream":false,"messages":[{"role":"user","content":"hi"}],"${member}":${value}}`;
  const response = await post('/first/v1/messages', body);
  expect(response.status).toBe(400);
  expect(await errorOf(response)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: `Request body has "${member}" more than once.` } });
  expect(calls()).toBe(before);
});

test('a zstd body reaches the upstream as the plain JSON, without the encoding header', async () => {
  const body = JSON.stringify({ model: 'gpt-5.5', input: 'héllo', stream: false });
  const response = await post('/second/v1/responses', zlib.zstdCompressSync(Buffer.from(body)), { 'content-encoding': 'zstd' });
  expect(response.status).toBe(200);
  const received = oai.requests.at(-1)!;
  expect(received.body).toBe(body);
  expect(received.headers['content-encoding']).toBeUndefined();
});

test('a compression bomb is a 413 in the client\'s format; an unknown encoding a 415; garbage a 400 with plain text', async () => {
  const bomb = await post('/first/v1/messages', zlib.gzipSync(Buffer.alloc(200 * 1024 * 1024, 0x20)), { 'content-encoding': 'gzip' });
  expect(bomb.status).toBe(413);
  expect((await errorOf(bomb)).error.type).toBe('request_too_large');
  const unknown = await post('/second/v1/responses', Buffer.from('x'), { 'content-encoding': 'lzma' });
  expect(unknown.status).toBe(415);
  expect((await errorOf(unknown)).error.code).toBe('unsupported_media_type');
  const garbage = await post('/second/v1/responses', Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xff, 0xfe, 0x00, 0x01]), { 'content-encoding': 'zstd' });
  expect(garbage.status).toBe(400);
  expect((await errorOf(garbage)).error.message).toMatch(/^[\x20-\x7e]+$/);
});

test('invalid JSON is described without echoing the bytes that broke it', async () => {
  const response = await post('/first/v1/messages', Buffer.from([0x7b, 0x22, 0x6d, 0xff, 0xfe, 0x01, 0x02]));
  expect(response.status).toBe(400);
  expect((await errorOf(response)).error.message).toMatch(/^Request body is not valid JSON: [\x20-\x7e]+$/);
});
