import http from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { generateApiKey } from '../../lambda/auth/key-material.ts';
import { logOf, startGateway, waitForLogs, type Harness } from '../support/gateway-harness.ts';
import { fixture, sendJson, sendSse, sseEvents, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';

let upstream: UpstreamStub;
let gateway: Harness;
let key: string;

beforeAll(async () => {
  upstream = await startUpstream();
  gateway = await startGateway({
    config: {
      upstreams: {
        ant: { type: 'anthropic', baseUrl: upstream.url },
        oai: { type: 'openai', baseUrl: `${upstream.url}/v1` },
        dead: { type: 'anthropic', baseUrl: 'http://127.0.0.1:9' },
        keyless: { type: 'openai', baseUrl: `${upstream.url}/v1`, apiKeyEnv: 'TEAM_OPENAI_KEY_VAR' },
        sim: { type: 'simulator' },
      },
      routes: [
        { model: 'claude-dead', upstream: 'dead' },
        { model: 'gpt-keyless', upstream: 'keyless' },
        { model: 'claude-*', upstream: 'ant' },
        { model: 'gpt-*', upstream: 'oai' },
        { model: 'sim-*', upstream: 'sim' },
      ],
    },
    settings: { maxBodyBytes: 4096, firstByteTimeoutMs: 300 },
  });
  ({ key } = await gateway.issueKey());
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

const messages = { model: 'claude-sonnet-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] };

async function call(path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const response = await fetch(`${gateway.url}${path}`, {
    method: init.method ?? 'POST',
    headers: { 'content-type': 'application/json', ...init.headers },
    body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

const bearer = (value: string) => ({ authorization: `Bearer ${value}` });

describe('keys', () => {
  test('a refused key\'s 401 says why, in each format, marked final; only a once-valid key\'s holder learns it was revoked or expired', async () => {
    const expired = await gateway.issueKey({ expiresAt: Math.floor(Date.now() / 1000) - 1 });
    const revoked = await gateway.issueKey();
    const record = await gateway.store.findById(revoked.id);
    await gateway.store.revoke(record!.keyHash);
    // Anyone can make a key of the right form (the checksum is public): it is only "not issued here".
    const forged = (await gateway.issueKey()).key.replace(/^gwk_./, (start) => (start === 'gwk_A' ? 'gwk_B' : 'gwk_A'));
    const unknownKey = generateApiKey();
    const upstreamBefore = upstream.requests.length;
    const cases: [string, Record<string, string>, RegExp][] = [
      ['missing', {}, /^No API key was sent: send the key this gateway issued \(gwk_\.\.\.\) as a Bearer token, or sign in if the gateway has sign-in \(Claude Code's \/login, gateway-login for the other clients\)\.$/],
      ['not a Bearer token', { authorization: key }, /^The Authorization header is not a Bearer token/],
      ['a provider key', bearer('sk-ant-api03-provider'), /^The API key sent is not a credential this gateway issued \(its keys start with gwk_\)/],
      ['a provider key in x-api-key', { 'x-api-key': 'sk-ant-api03-provider' }, /^The API key sent is not a credential this gateway issued/],
      ['a mistyped key', bearer(forged), /^The gateway key sent is incomplete or mistyped/],
      ['a cut-short key', bearer(key.slice(0, 30)), /^The gateway key sent is incomplete or mistyped/],
      ['a key never issued here', bearer(unknownKey), /^This gateway did not issue the key sent/],
      ['an expired key', { 'x-api-key': expired.key }, new RegExp(`^Key ${expired.id} expired at \\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z; ask the gateway's operator for a new one\\.$`)],
      ['a revoked key', bearer(revoked.key), new RegExp(`^Key ${revoked.id} was revoked; ask the gateway's operator for a new one\\.$`)],
    ];
    for (const [, headers, message] of cases) {
      const first = await call('/first/v1/messages', { body: messages, headers });
      expect(first.status).toBe(401);
      expect(first.headers.get('x-should-retry')).toBe('false');
      expect(first.body).toEqual({ type: 'error', error: { type: 'authentication_error', message: expect.stringMatching(message) }, request_id: first.headers.get('request-id') });
      // Claude Code hides a 401 that mentions x-api-key behind "Not logged in · Please run /login".
      expect(first.body.error.message).not.toMatch(/x-api-key/i);
      const second = await call('/second/v1/responses', { body: { model: 'gpt-5.5', input: 'hi' }, headers });
      expect(second.status).toBe(401);
      expect(second.body).toEqual({ error: { message: first.body.error.message, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
    }
    // What a caller holding no issued key can learn does not depend on which keys exist.
    expect((await call('/first/v1/messages', { body: messages, headers: bearer(generateApiKey()) })).body.error.message).toBe((await call('/first/v1/messages', { body: messages, headers: bearer(unknownKey) })).body.error.message);
    expect(upstream.requests).toHaveLength(upstreamBefore);
  });

  test('x-api-key works, and a gateway key wins over a provider key in the other header', async () => {
    upstream.reply(sendJson(200, fixture('anthropic/text.json')));
    expect((await call('/first/v1/messages', { body: messages, headers: { 'x-api-key': key } })).status).toBe(200);
    expect((await call('/first/v1/messages', { body: messages, headers: { 'x-api-key': key, authorization: 'Bearer sk-ant-provider' } })).status).toBe(200);
  });

  test('the SDKs stop at once on a 401 (no retries)', async () => {
    const before = gateway.logs.length;
    const anthropic = new Anthropic({ baseURL: `${gateway.url}/first`, apiKey: 'wrong', maxRetries: 3 });
    const anthropicError = await anthropic.messages.create({ ...messages, messages: [{ role: 'user', content: 'hi' }] }).catch((error: unknown) => error);
    expect(anthropicError).toBeInstanceOf(Anthropic.AuthenticationError);
    const openai = new OpenAI({ baseURL: `${gateway.url}/second/v1`, apiKey: 'wrong', maxRetries: 3 });
    const openaiError = await openai.responses.create({ model: 'gpt-5.5', input: 'hi' }).catch((error: unknown) => error);
    expect(openaiError).toBeInstanceOf(OpenAI.AuthenticationError);
    // Each refusal's log line, however long it takes to be written; then time for a retry, which would show up as a second 401 for the same client.
    for (const error of [anthropicError, openaiError]) await logOf(gateway, (error as { requestID: string }).requestID);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refused = gateway.logs.slice(before).filter((line) => line.status === 401);
    expect(refused.map((line) => line.requestId).sort()).toEqual([(anthropicError as { requestID: string }).requestID, (openaiError as { requestID: string }).requestID].sort());
  });

  test('a model outside the key allowlist is 403 permission_error; lists show only allowed models', async () => {
    const limited = await gateway.issueKey({ models: ['claude-haiku-*', 'sim-?'] });
    const denied = await call('/first/v1/messages', { body: messages, headers: bearer(limited.key) });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toEqual({ type: 'permission_error', message: 'This API key may not use model "claude-sonnet-5".' });
    const deniedSecond = await call('/second/v1/responses', { body: { model: 'gpt-5.5', input: 'x' }, headers: bearer(limited.key) });
    expect(deniedSecond.status).toBe(403);
    expect(deniedSecond.body.error).toMatchObject({ type: 'permission_error', param: 'model' });
    expect((await call('/first/v1/messages', { body: { ...messages, model: 'sim-a' }, headers: bearer(limited.key) })).status).toBe(200);
  });
});

describe('bad requests', () => {
  test.each([
    ['not JSON', '{"model":', /not valid JSON/],
    ['not an object', '[1,2]', /must be a JSON object/],
    ['missing max_tokens', { model: 'claude-sonnet-5', messages: [] }, /^max_tokens: Field required$/],
    ['max_tokens not an integer', { model: 'claude-sonnet-5', max_tokens: 'lots', messages: [] }, /^max_tokens: /],
    ['messages not a list', { model: 'claude-sonnet-5', max_tokens: 5, messages: 'hi' }, /^messages: /],
    ['empty model', { model: '', max_tokens: 5, messages: [] }, /^model: /],
  ])('Messages, %s: 400 invalid_request_error', async (_name, body, message) => {
    const result = await call('/first/v1/messages', { body, headers: bearer(key) });
    expect(result.status).toBe(400);
    expect(result.body.type).toBe('error');
    expect(result.body.error.type).toBe('invalid_request_error');
    expect(result.body.error.message).toMatch(message);
    expect(result.headers.get('x-should-retry')).toBe('false');
  });

  test.each([
    ['missing input', { model: 'gpt-5.5' }, 'input'],
    ['missing model', { input: 'hi' }, 'model'],
    ['input of the wrong type', { model: 'gpt-5.5', input: 5 }, 'input'],
  ])('Responses, %s: 400 with param', async (_name, body, param) => {
    const result = await call('/second/v1/responses', { body, headers: bearer(key) });
    expect(result.status).toBe(400);
    expect(result.body.error).toMatchObject({ type: 'invalid_request_error', param });
  });

  test('a body over the limit is 413; a non-JSON content type is 415', async () => {
    const big = { ...messages, messages: [{ role: 'user', content: 'x'.repeat(5000) }] };
    const first = await call('/first/v1/messages', { body: big, headers: bearer(key) });
    expect(first.status).toBe(413);
    expect(first.body.error.type).toBe('request_too_large');
    const second = await call('/second/v1/responses', { body: { model: 'gpt-5.5', input: 'x'.repeat(5000) }, headers: bearer(key) });
    expect(second.status).toBe(413);
    expect(second.body.error.code).toBe('request_too_large');
    const form = await call('/first/v1/messages', { body: 'model=x', headers: { ...bearer(key), 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.status).toBe(415);
    expect(form.body.error.type).toBe('invalid_request_error');
  });

  test('unknown paths and methods: 404/405 in the prefix format', async () => {
    const first = await call('/first/v1/complete', { body: messages, headers: bearer(key) });
    expect(first.status).toBe(404);
    expect(first.body.error.type).toBe('not_found_error');
    const second = await call('/second/v1/chat/completions', { body: {}, headers: bearer(key) });
    expect(second.status).toBe(404);
    expect(second.body.error.code).toBe('not_found');
    const method = await call('/first/v1/messages', { method: 'GET', headers: bearer(key) });
    expect(method.status).toBe(405);
    expect(method.headers.get('allow')).toBe('POST');
    expect((await call('/elsewhere', { method: 'GET' })).status).toBe(404);
  });

  test('an endpoint under the wrong base is a 421 that names the base, in the format of the client that sent it, with no key needed', async () => {
    const upstreamBefore = upstream.requests.length;
    // Claude Code given the bare address, or the Responses base: it appends /v1/messages.
    for (const path of ['/v1/messages?beta=true', '/second/v1/v1/messages?beta=true']) {
      const answer = await call(path, { body: messages });
      expect(answer.status).toBe(421);
      expect(answer.headers.get('x-should-retry')).toBe('false');
      expect(answer.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('Set ANTHROPIC_BASE_URL (Claude Code) or baseURL (Anthropic SDK) to the gateway address followed by /first.') } });
    }
    // Codex given the Messages base: it appends /responses.
    const codex = await call('/first/v1/responses', { body: { model: 'gpt-5.5', input: 'hi' } });
    expect(codex.status).toBe(421);
    expect(codex.body.error).toMatchObject({ type: 'invalid_request_error', code: 'wrong_base_url', message: expect.stringContaining('followed by /second/v1.') });
    expect(upstream.requests).toHaveLength(upstreamBefore);
  });

  test('every log line carries the request\'s method and path (no query string), refusals included', async () => {
    const answers = [await call('/v1/messages?beta=true', { body: messages }), await call('/nowhere/at/all?token=secret', { method: 'GET' }), await call('/first/v1/messages', { body: messages, headers: bearer('wrong') })];
    const lines = await Promise.all(answers.map((answer) => logOf(gateway, answer.headers.get('request-id'))));
    expect(lines.map((line) => [line.method, line.path, line.status])).toEqual([
      ['POST', '/v1/messages', 421],
      ['GET', '/nowhere/at/all', 404],
      ['POST', '/first/v1/messages', 401],
    ]);
    expect(JSON.stringify(lines)).not.toContain('secret');
  });

  test('a model with no route is 404', async () => {
    const none = await call('/first/v1/messages', { body: { ...messages, model: 'llama-3' }, headers: bearer(key) });
    expect(none.status).toBe(404);
    expect(none.body.error).toEqual({ type: 'not_found_error', message: 'No route for model "llama-3". Routed models: claude-dead, gpt-keyless, claude-*, gpt-*, sim-*.' });
    const second = await call('/second/v1/responses', { body: { model: 'llama-3', input: 'hi' }, headers: bearer(key) });
    expect(second.status).toBe(404);
    expect(second.body.error).toMatchObject({ code: 'model_not_found', param: 'model', message: expect.stringContaining('Routed models: claude-dead, gpt-keyless, claude-*, gpt-*, sim-*.') });
    // A key with an allowlist sees the routed names it may use, and its allowlist.
    const limited = await gateway.issueKey({ models: ['claude-dead', 'llama-*'] });
    const narrowed = await call('/first/v1/messages', { body: { ...messages, model: 'llama-3' }, headers: bearer(limited.key) });
    expect(narrowed.body.error.message).toBe('No route for model "llama-3". Routed models: claude-dead. This key may use: claude-dead, llama-*.');
  });

  test('a WebSocket upgrade on /second/v1/responses is answered 426 at once', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${gateway.url}/second/v1/responses`, { headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', ...bearer(key) } });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('upgrade', () => reject(new Error('upgraded')));
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(426);
  });

  test('HEAD on the base address answers 200 without a key', async () => {
    const response = await fetch(`${gateway.url}/first`, { method: 'HEAD' });
    expect(response.status).toBe(200);
  });
});

describe('upstream failures', () => {
  test("a missing upstream credential is a 500 that names nothing of the operator's setup; the log line names the variable", async () => {
    const before = gateway.logs.length;
    const result = await call('/second/v1/responses', { headers: bearer(key), body: { model: 'gpt-keyless', input: 'hi' } });
    expect(result.status).toBe(500);
    expect(result.body.error.type).toBe('server_error');
    expect(JSON.stringify(result.body)).not.toMatch(/TEAM_OPENAI_KEY_VAR|keyless|secret|environment/i);
    const [line] = (await waitForLogs(gateway, before + 1)).slice(before);
    expect(line).toMatchObject({ status: 500, outcome: 'configuration', cause: expect.stringContaining('TEAM_OPENAI_KEY_VAR') });
    expect(upstream.requests.some((request) => request.body.includes('gpt-keyless'))).toBe(false);
  });

  test('unreachable upstream: 502 in the client format, retryable', async () => {
    const result = await call('/first/v1/messages', { body: { ...messages, model: 'claude-dead' }, headers: bearer(key) });
    expect(result.status).toBe(502);
    expect(result.body.error).toEqual({ type: 'api_error', message: 'The upstream could not be reached.' });
    expect(result.headers.get('x-should-retry')).toBeNull();
  });

  test('no response headers within the first-byte timeout: 504', async () => {
    upstream.reply(() => {}); // accepts and never answers
    const started = Date.now();
    const result = await call('/first/v1/messages', { body: { ...messages, stream: true }, headers: bearer(key) });
    expect(result.status).toBe(504);
    expect(result.body.error.type).toBe('timeout_error');
    expect(Date.now() - started).toBeLessThan(3_000);
    const second = await call('/second/v1/responses', { body: { model: 'gpt-5.5', input: 'hi', stream: true }, headers: bearer(key) });
    expect(second.status).toBe(504);
    expect(second.body.error).toMatchObject({ type: 'server_error', code: 'upstream_timeout' });
  });

  test('an upstream that dies mid-stream: Messages clients get an error event, the SDK raises it', async () => {
    const events = sseEvents(fixture('anthropic/text-stream.sse'));
    // The gap lets each piece reach the gateway before the socket is destroyed.
    upstream.reply(sendSse([...events.slice(0, 4), 'event: content_block_delta\ndata: {"type":"con'], { end: 'destroy', gapMs: 20 }));
    const raw = await fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body: JSON.stringify({ ...messages, stream: true }) });
    const text = await raw.text();
    expect(raw.status).toBe(200);
    expect(text).toBe(`${events.slice(0, 4).join('')}event: error\ndata: {"type":"error","error":{"type":"api_error","message":"The upstream connection failed mid-stream."}}\n\n`);

    const anthropic = new Anthropic({ baseURL: `${gateway.url}/first`, apiKey: key, maxRetries: 0 });
    await expect(anthropic.messages.stream({ ...messages, messages: [{ role: 'user', content: 'hi' }] }).finalMessage()).rejects.toMatchObject({ error: { error: { type: 'api_error' } } });
  });

  test('an upstream that dies mid-stream: Responses clients get response.failed', async () => {
    const events = sseEvents(fixture('openai/text-stream.sse'));
    upstream.reply(sendSse(events.slice(0, 5), { end: 'destroy', gapMs: 20 }));
    const openai = new OpenAI({ baseURL: `${gateway.url}/second/v1`, apiKey: key, maxRetries: 0 });
    const seen: string[] = [];
    let failed: unknown;
    for await (const event of await openai.responses.create({ model: 'gpt-5.5', input: 'hi', stream: true })) {
      seen.push(event.type);
      if (event.type === 'response.failed') failed = event;
    }
    expect(seen.at(-1)).toBe('response.failed');
    expect(failed).toMatchObject({ sequence_number: 5, response: { status: 'failed', error: { code: 'server_error' } } });
  });

  test('an upstream that ends early but cleanly is reported too, not passed off as complete', async () => {
    const events = sseEvents(fixture('anthropic/text-stream.sse'));
    upstream.reply(sendSse(events.slice(0, 6)));
    const raw = await fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body: JSON.stringify({ ...messages, stream: true }) });
    expect(await raw.text()).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"The upstream closed the stream before it was complete."\}\}\n\n$/);
  });
});
