import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { logOf, startGateway, type Harness } from '../support/gateway-harness.ts';
import { validateMessagesStream, validateResponsesStream } from '../support/stream-validators.ts';
import { fixture, sendJson, sendSse, sseEvents, startUpstream, type StubHandler, type UpstreamStub } from '../support/upstream-stub.ts';

/**
 * Fallbacks with injected faults: a target is replaced exactly when it failed before any byte
 * reached the client, never after; keys rest and rotate; conversations stick to their target.
 */
let primary: UpstreamStub;
let backup: UpstreamStub;
let responses: UpstreamStub;
let refusedUrl: string;
let gateway: Harness;
let key: string;

const textStream = fixture('anthropic/text-stream.sse');
const answerJson = JSON.parse(fixture('anthropic/text.json'));

beforeAll(async () => {
  [primary, backup, responses] = await Promise.all([startUpstream(), startUpstream(), startUpstream()]);
  refusedUrl = await closedPort();
  gateway = await startGateway({
    config: {
      upstreams: {
        primary: { type: 'anthropic', baseUrl: primary.url, apiKeyEnv: ['KEY_A', 'KEY_B'] },
        keyed: { type: 'anthropic', baseUrl: primary.url, apiKeyEnv: ['KEY_C', 'KEY_D'] },
        backup: { type: 'anthropic', baseUrl: backup.url },
        dead: { type: 'anthropic', baseUrl: refusedUrl },
        oai: { type: 'openai', baseUrl: `${responses.url}/v1` },
      },
      routes: [
        { model: 'claude-dead-first', upstream: 'dead', fallbacks: [{ upstream: 'backup', upstreamModel: 'claude-backup' }] },
        { model: 'claude-weighted', targets: [{ upstream: 'primary', weight: 1 }, { upstream: 'backup', weight: 1 }] },
        { model: 'claude-keys', upstream: 'keyed', fallbacks: [{ upstream: 'backup', upstreamModel: 'claude-backup' }] },
        { model: 'gpt-translated', upstream: 'oai', upstreamModel: 'gpt-5.5', fallbacks: [{ upstream: 'backup', upstreamModel: 'claude-backup' }] },
        { model: 'claude-*', upstream: 'primary', fallbacks: [{ upstream: 'backup', upstreamModel: 'claude-backup' }] },
      ],
    },
    env: { KEY_A: 'sk-a', KEY_B: 'sk-b', KEY_C: 'sk-c', KEY_D: 'sk-d' },
    settings: { firstByteTimeoutMs: 300 },
    health: { failuresToCool: 1_000 },
  });
  ({ key } = await gateway.issueKey());
});

afterAll(async () => {
  await gateway.close();
  await Promise.all([primary.close(), backup.close(), responses.close()]);
});

beforeEach(() => {
  primary.reply(sendSse(textStream));
  backup.reply(sendSse(textStream));
});

const messages = (model: string, stream: boolean, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}/first/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, max_tokens: 20, stream, messages: [{ role: 'user', content: 'hi' }] }),
  });

async function served(model: string, fault: StubHandler, stream = true) {
  primary.reply(fault);
  const before = { primary: primary.requests.length, backup: backup.requests.length };
  const response = await messages(model, stream);
  const text = await response.text();
  const line = await logOf(gateway, response.headers.get('request-id'));
  return { response, text, line, calls: { primary: primary.requests.length - before.primary, backup: backup.requests.length - before.backup } };
}

test.each([
  ['529 overloaded', sendJson(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })],
  ['500', sendJson(500, { type: 'error', error: { type: 'api_error', message: 'boom' } })],
  ['429 with retry-after', sendJson(429, { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }, { 'retry-after': '7' })],
  ['headers never sent', () => {}],
  [
    'a reset after the headers',
    (_request, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      setTimeout(() => res.socket?.destroy(), 20);
    },
  ],
  ['an overload error as the first event', sendSse('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n')],
] satisfies [string, StubHandler][])('%s before any byte: the fallback serves, the client sees only its answer', async (_name, fault) => {
  const { response, text, line, calls } = await served('claude-sonnet-5', fault);
  expect(response.status).toBe(200);
  expect(response.headers.get('x-gateway-upstream')).toBe('backup');
  validateMessagesStream(text);
  expect(text).toBe(textStream.replace('"model":"claude-sonnet-5"', '"model":"claude-sonnet-5"'));
  expect(calls.backup).toBe(1);
  expect(backup.requests.at(-1)!.body).toContain('"model":"claude-backup"');
  expect(line).toMatchObject({ status: 200, upstream: 'backup' });
  // Every try is in the log: the primary (twice for a 429, once per key), then the fallback.
  const attempts = line.attempts as Record<string, unknown>[];
  expect(attempts.at(-1)).toMatchObject({ upstream: 'backup', model: 'claude-backup', status: 200 });
  for (const attempt of attempts.slice(0, -1)) {
    expect(attempt).toMatchObject({ upstream: 'primary', ms: expect.any(Number) });
    expect(attempt.status ?? attempt.error).toBeDefined();
  }
});

test('a refused connection falls back, non-streaming too', async () => {
  const response = await messages('claude-dead-first', false);
  expect(response.status).toBe(200);
  expect(response.headers.get('x-gateway-upstream')).toBe('backup');
  const line = await logOf(gateway, response.headers.get('request-id'));
  expect(line.attempts).toMatchObject([{ upstream: 'dead', error: 'The upstream could not be reached.' }, { upstream: 'backup', status: 200 }]);
});

test('never after the first byte: a stream that breaks mid-way ends with the error event, no fallback', async () => {
  const events = sseEvents(textStream);
  // The first events reach the client before the connection breaks.
  const { response, text, line, calls } = await served('claude-sonnet-5', sendSse(events.slice(0, 4), { end: 'destroy', gapMs: 50 }));
  expect(response.status).toBe(200);
  expect(calls).toEqual({ primary: 1, backup: 0 });
  expect(text.startsWith(events.slice(0, 4).join(''))).toBe(true);
  expect(text).toMatch(/event: error\n/);
  expect(line).toMatchObject({ outcome: 'upstream_failed', upstream: 'primary' });
});

test('errors no other target would change are not retried: a 400 comes back as the upstream sent it', async () => {
  const body = { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 300000 tokens > 200000 maximum' } };
  const { response, text, calls } = await served('claude-sonnet-5', sendJson(400, body));
  expect(response.status).toBe(400);
  expect(JSON.parse(text)).toEqual(body);
  expect(calls).toEqual({ primary: 1, backup: 0 });
});

test('without a fallback in reach the upstream\'s own failure comes back unmodified', async () => {
  primary.reply(sendJson(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
  backup.reply(sendJson(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded too' } }));
  const response = await messages('claude-sonnet-5', true);
  expect(response.status).toBe(529);
  expect(await response.json()).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded too' } });
  expect(response.headers.get('x-gateway-upstream')).toBe('backup');
});

test('a key that got 429 rests for its retry-after and the other key serves at once, on the same target', async () => {
  const seen: string[] = [];
  primary.reply((request, res) => {
    seen.push(request.headers['x-api-key'] as string);
    if (seen.length === 1) return sendJson(429, { type: 'error', error: { type: 'rate_limit_error', message: 'slow' } }, { 'retry-after': '60' })(request, res);
    return sendSse(textStream)(request, res);
  });
  const response = await messages('claude-keys', true, { 'x-claude-code-session-id': 'rest-test' });
  expect(response.status).toBe(200);
  expect(response.headers.get('x-gateway-upstream')).toBe('keyed');
  await response.text();
  expect(new Set(seen)).toEqual(new Set(['sk-c', 'sk-d']));
  const line = await logOf(gateway, response.headers.get('request-id'));
  expect(line.attempts).toMatchObject([{ upstream: 'keyed', status: 429, keyRestedMs: 60_000 }, { upstream: 'keyed', status: 200 }]);
  expect(JSON.stringify(line)).not.toMatch(/sk-c|sk-d/);
  // The rested key stays out for this conversation's next requests.
  const next = await messages('claude-keys', true, { 'x-claude-code-session-id': 'rest-test' });
  await next.text();
  expect(seen.at(-1)).toBe(seen[1]);
});

test('stickiness: 100 requests of one session keep one target and key; sessions spread over both', async () => {
  const targets = new Set<string>();
  for (let i = 0; i < 100; i++) {
    const response = await messages('claude-weighted', false, { 'x-claude-code-session-id': 'sticky-session' });
    await response.text();
    targets.add(response.headers.get('x-gateway-upstream') as string);
  }
  // This session's first choice is the primary (rendezvous hashing is deterministic), which has two keys.
  expect(targets).toEqual(new Set(['primary']));
  const keysSeen = new Set(primary.requests.slice(-100).map((request) => request.headers['x-api-key']));
  expect(keysSeen.size).toBe(1);
  const spread = new Set<string>();
  for (let i = 0; i < 40; i++) {
    const response = await messages('claude-weighted', false, { 'x-claude-code-session-id': `session-${i}` });
    await response.text();
    spread.add(response.headers.get('x-gateway-upstream') as string);
  }
  expect(spread).toEqual(new Set(['primary', 'backup']));
});

test("stickiness for Codex: a conversation's prompt_cache_key keeps one target; conversations spread", async () => {
  const ask = async (cacheKey: string) => {
    const response = await fetch(`${gateway.url}/second/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-weighted', input: 'hi', prompt_cache_key: cacheKey }) });
    await response.text();
    return response.headers.get('x-gateway-upstream') as string;
  };
  const one = new Set<string>();
  for (let i = 0; i < 30; i++) one.add(await ask('codex-conversation'));
  expect(one.size).toBe(1);
  const spread = new Set<string>();
  for (let i = 0; i < 30; i++) spread.add(await ask(`codex-conversation-${i}`));
  expect(spread).toEqual(new Set(['primary', 'backup']));
});

test('a translated fallback: Responses client, openai primary down, anthropic fallback; the stream passes the grammar checks', async () => {
  responses.reply(sendJson(503, { error: { message: 'unavailable', type: 'server_error', code: null } }));
  const openai = new OpenAI({ baseURL: `${gateway.url}/second/v1`, apiKey: key, maxRetries: 0 });
  const raw = await fetch(`${gateway.url}/second/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-translated', input: 'hi', stream: true }) });
  expect(raw.headers.get('x-gateway-upstream')).toBe('backup');
  validateResponsesStream(await raw.text());
  const final = await openai.responses.stream({ model: 'gpt-translated', input: 'hi' }).finalResponse();
  expect(final.output_text).toBe('Hi there — ünïcödé ✓ 你好!');
  // And a Messages client through the Anthropic SDK on a route whose primary is down.
  const anthropic = new Anthropic({ baseURL: `${gateway.url}/first`, apiKey: key, maxRetries: 0 });
  primary.reply(() => {});
  const message = await anthropic.messages.stream({ model: 'claude-sonnet-5', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
  expect(message.content[0]).toMatchObject({ type: 'text' });
});

async function closedPort(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

test('a route with fallbacks whose primary serves is still byte-for-byte', async () => {
  const { response, text, line, calls } = await served('claude-sonnet-5', sendSse(textStream));
  expect(response.headers.get('x-gateway-upstream')).toBe('primary');
  expect(text).toBe(textStream);
  expect(calls).toEqual({ primary: 1, backup: 0 });
  expect(line.attempts).toBeUndefined();
});

test('cooldown: a primary that keeps failing is skipped (no time lost on it), then tried again after the cooldown', async () => {
  let now = Date.now();
  const cooling = await startGateway({
    config: {
      upstreams: { primary: { type: 'anthropic', baseUrl: primary.url }, backup: { type: 'anthropic', baseUrl: backup.url } },
      routes: [{ model: '*', upstream: 'primary', fallbacks: [{ upstream: 'backup' }] }],
    },
    settings: { firstByteTimeoutMs: 300 },
    health: { failuresToCool: 2, cooldownMs: 60_000, now: () => now },
    shareStoreWith: gateway,
  });
  try {
    primary.reply(() => {});
    const send = async () => {
      const response = await fetch(`${cooling.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'x' }] }) });
      await response.text();
      return logOf(cooling, response.headers.get('request-id'));
    };
    expect((await send()).attempts).toHaveLength(2);
    expect((await send()).attempts).toHaveLength(2);
    // Cooling down: the primary is not even called, so its silence costs this request nothing.
    const calledBefore = primary.requests.length;
    const skipped = await send();
    expect(skipped.upstream).toBe('backup');
    expect(skipped.attempts).toBeUndefined();
    expect(primary.requests.length).toBe(calledBefore);
    now += 60_001;
    primary.reply(sendSse(textStream));
    expect(await send()).toMatchObject({ upstream: 'primary' });
  } finally {
    await cooling.close();
  }
});
