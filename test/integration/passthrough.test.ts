import http from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { logOf, startGateway, waitForLogs, type Harness } from '../support/gateway-harness.ts';
import { fixture, sendJson, sendSse, sseEvents, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';

const ANTHROPIC_SECRET = 'sk-ant-upstream-secret-value';
const OPENAI_SECRET = 'sk-oai-upstream-secret-value';

let anthropicUpstream: UpstreamStub;
let openaiUpstream: UpstreamStub;
let gateway: Harness;
let key: string;

beforeAll(async () => {
  anthropicUpstream = await startUpstream();
  openaiUpstream = await startUpstream();
  gateway = await startGateway({
    config: {
      upstreams: {
        ant: { type: 'anthropic', baseUrl: anthropicUpstream.url, apiKeyEnv: 'ANT_KEY' },
        oai: { type: 'openai', baseUrl: `${openaiUpstream.url}/v1`, apiKeyEnv: 'OAI_KEY' },
      },
      routes: [
        { model: 'team-claude', upstream: 'ant', upstreamModel: 'claude-sonnet-5' },
        { model: 'claude-*', upstream: 'ant' },
        { model: 'gpt-*', upstream: 'oai' },
      ],
    },
    env: { ANT_KEY: ANTHROPIC_SECRET, OAI_KEY: OPENAI_SECRET },
  });
  ({ key } = await gateway.issueKey());
});

afterAll(async () => {
  await gateway.close();
  await anthropicUpstream.close();
  await openaiUpstream.close();
});

const anthropic = () => new Anthropic({ baseURL: `${gateway.url}/first`, apiKey: key, maxRetries: 0 });
const openai = () => new OpenAI({ baseURL: `${gateway.url}/second/v1`, apiKey: key, maxRetries: 0 });
const request = { model: 'claude-sonnet-5', max_tokens: 256, messages: [{ role: 'user' as const, content: 'Say hi' }] };

function post(path: string, body: string, headers: Record<string, string> = {}) {
  return fetch(`${gateway.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body });
}

describe('Messages passthrough to an anthropic upstream', () => {
  test('non-streaming: the SDK gets the upstream message; the upstream gets the body byte-for-byte and its own credential', async () => {
    anthropicUpstream.reply(
      sendJson(200, fixture('anthropic/text.json'), { 'anthropic-ratelimit-requests-remaining': '99', 'anthropic-ratelimit-unified-status': 'allowed_warning', 'anthropic-organization-id': 'org-secret' }),
    );
    const client = anthropic();
    const { data: message, response } = await client.messages.create(request).withResponse();
    expect(message.content).toEqual([{ type: 'text', text: 'Hi there!', citations: null }]);
    // The operator's organization's limits at the provider are not the caller's (Claude Code would show them as theirs).
    expect([...response.headers.keys()].filter((name) => name.startsWith('anthropic-ratelimit-'))).toEqual([]);
    expect(response.headers.get('anthropic-organization-id')).toBeNull();
    expect(response.headers.get('request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    expect(response.headers.get('x-request-id')).toBe(response.headers.get('request-id'));
    expect(response.headers.get('x-upstream-request-id')).toBe('req_upstream_1');
    const upstream = anthropicUpstream.requests.at(-1)!;
    expect(upstream.url).toBe('/v1/messages');
    expect(JSON.parse(upstream.body)).toEqual(request);
    expect(upstream.headers['x-api-key']).toBe(ANTHROPIC_SECRET);
    expect(upstream.headers.authorization).toBeUndefined();
    expect(upstream.headers['anthropic-version']).toBeDefined();
  });

  test('the body is forwarded byte-for-byte, odd spacing and escapes included, and ?beta=true is accepted', async () => {
    anthropicUpstream.reply(sendJson(200, fixture('anthropic/text.json')));
    const body = '{"model":"claude-sonnet-5" , "max_tokens":1.0e2,"messages":[{"role":"user","content":"caf\\u00e9 \u2713"}],"metadata":{"user_id":"{\\"session_id\\":\\"s\\"}"},"unknown_future_field":[1,2]}';
    const response = await post('/first/v1/messages?beta=true', body);
    expect(response.status).toBe(200);
    expect(anthropicUpstream.requests.at(-1)!.body).toBe(body);
  });

  test('anthropic-beta and anthropic-version go through verbatim; provider-version is an alias; the default is 2023-06-01', async () => {
    anthropicUpstream.reply(sendJson(200, fixture('anthropic/text.json')));
    const beta = 'claude-code-20250219,context-1m-2025-08-07,interleaved-thinking-2025-05-14';
    await post('/first/v1/messages', JSON.stringify(request), { 'anthropic-beta': beta, 'anthropic-version': '2026-10-21', 'x-claude-code-session-id': 'abc' });
    let headers = anthropicUpstream.requests.at(-1)!.headers;
    expect(headers['anthropic-beta']).toBe(beta);
    expect(headers['anthropic-version']).toBe('2026-10-21');
    expect(headers['x-claude-code-session-id']).toBe('abc');
    await post('/first/v1/messages', JSON.stringify(request), { 'provider-version': '2024-01-01' });
    headers = anthropicUpstream.requests.at(-1)!.headers;
    expect(headers['anthropic-version']).toBe('2024-01-01');
    expect(headers['provider-version']).toBeUndefined();
    await post('/first/v1/messages', JSON.stringify(request));
    expect(anthropicUpstream.requests.at(-1)!.headers['anthropic-version']).toBe('2023-06-01');
  });

  test('a route rename changes only the model', async () => {
    anthropicUpstream.reply(sendJson(200, fixture('anthropic/text.json')));
    const body = JSON.stringify({ ...request, model: 'team-claude' });
    await post('/first/v1/messages', body);
    expect(anthropicUpstream.requests.at(-1)!.body).toBe(body.replace('"team-claude"', '"claude-sonnet-5"'));
  });

  test('a route rename is undone in the answer, streamed and not (Claude Code drops thinking otherwise)', async () => {
    anthropicUpstream.reply(sendJson(200, fixture('anthropic/text.json')));
    const json = await post('/first/v1/messages', JSON.stringify({ ...request, model: 'team-claude' }));
    const text = await json.text();
    expect(JSON.parse(text).model).toBe('team-claude');
    expect(text).toBe(fixture('anthropic/text.json').replace('"model": "claude-sonnet-5"', '"model": "team-claude"'));
    const stream = fixture('anthropic/thinking-tool-stream.sse');
    anthropicUpstream.reply(sendSse(sseEvents(stream)));
    const streamed = await (await post('/first/v1/messages', JSON.stringify({ ...request, model: 'team-claude', stream: true }))).text();
    const [start, ...rest] = sseEvents(streamed);
    expect(JSON.parse(start!.split('data: ')[1] as string).message.model).toBe('team-claude');
    expect(rest.join('')).toBe(sseEvents(stream).slice(1).join(''));
  });

  test('streaming: bytes arrive unchanged and the SDK stream helper assembles thinking and tool use', async () => {
    const stream = fixture('anthropic/thinking-tool-stream.sse');
    anthropicUpstream.reply(sendSse(sseEvents(stream)));
    const raw = await post('/first/v1/messages', JSON.stringify({ ...request, stream: true }));
    expect(raw.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(await raw.text()).toBe(stream);

    const helper = anthropic().messages.stream(request);
    const message = await helper.finalMessage();
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'The user wants the weather.', signature: 'EqQBCkgIARABGAIiQL+fixture/signature==' },
      { type: 'tool_use', id: 'toolu_01Fixture', name: 'get_weather', input: { city: 'Paris' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input_tokens: 25, output_tokens: 42 });
  });

  test('create({stream:true}) yields every event', async () => {
    anthropicUpstream.reply(sendSse(fixture('anthropic/text-stream.sse')));
    const types: string[] = [];
    for await (const event of await anthropic().messages.create({ ...request, stream: true })) types.push(event.type);
    expect(types).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
  });

  test('upstream errors come back unmodified: status, body, retry-after', async () => {
    const body = { type: 'error', error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' }, request_id: 'req_up' };
    anthropicUpstream.reply(sendJson(429, body, { 'retry-after': '7' }));
    const response = await post('/first/v1/messages', JSON.stringify(request));
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(await response.json()).toEqual(body);
    anthropicUpstream.reply(sendJson(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
    await expect(anthropic().messages.create(request)).rejects.toMatchObject({ status: 529, error: { error: { type: 'overloaded_error' } } });
  });

  test('count_tokens is forwarded to the anthropic upstream', async () => {
    anthropicUpstream.reply(sendJson(200, { input_tokens: 1234 }));
    const count = await anthropic().messages.countTokens({ model: 'claude-sonnet-5', messages: request.messages });
    expect(count.input_tokens).toBe(1234);
    expect(anthropicUpstream.requests.at(-1)!.url).toBe('/v1/messages/count_tokens');
  });
});

describe('Responses passthrough to an openai upstream', () => {
  test('non-streaming: the SDK gets the response, the upstream gets Bearer with its own key', async () => {
    openaiUpstream.reply(sendJson(200, fixture('openai/text.json'), { 'x-ratelimit-remaining-requests': '5', 'openai-organization': 'org-secret' }));
    const { data, response } = await openai().responses.create({ model: 'gpt-5.5', input: 'Say hi' }).withResponse();
    expect(data.output_text).toBe('Hi there — ✓');
    expect(response.headers.get('x-ratelimit-remaining-requests')).toBe('5');
    expect(response.headers.get('openai-organization')).toBeNull();
    const upstream = openaiUpstream.requests.at(-1)!;
    expect(upstream.url).toBe('/v1/responses');
    expect(upstream.headers.authorization).toBe(`Bearer ${OPENAI_SECRET}`);
    expect(upstream.headers['anthropic-version']).toBeUndefined();
    expect(JSON.parse(upstream.body)).toEqual({ model: 'gpt-5.5', input: 'Say hi' });
  });

  test('streaming: bytes unchanged; the stream helper gets reasoning and the function call', async () => {
    const stream = fixture('openai/reasoning-tool-stream.sse');
    openaiUpstream.reply(sendSse(sseEvents(stream)));
    const raw = await post('/second/v1/responses', JSON.stringify({ model: 'gpt-5.5', input: 'weather?', stream: true }));
    expect(await raw.text()).toBe(stream);

    const helper = openai().responses.stream({ model: 'gpt-5.5', input: 'weather?' });
    const final = await helper.finalResponse();
    expect(final.output.map((item) => item.type)).toEqual(['reasoning', 'function_call']);
    expect(final.output[0]).toMatchObject({ encrypted_content: 'gAAAAAFIXTURE-ENCRYPTED' });
    expect(final.output[1]).toMatchObject({ call_id: 'call_fixture01', arguments: '{"city":"Paris"}' });
  });

  test('/second/responses is an alias, and Codex headers reach the upstream', async () => {
    openaiUpstream.reply(sendSse(fixture('openai/text-stream.sse')));
    const response = await post('/second/responses', JSON.stringify({ model: 'gpt-5.5', input: 'hi', stream: true }), { originator: 'codex_exec', 'session-id': 's1' });
    expect(response.status).toBe(200);
    await response.text();
    expect(openaiUpstream.requests.at(-1)!.headers).toMatchObject({ originator: 'codex_exec', 'session-id': 's1' });
  });
});

/** One request through node:http, which (unlike fetch) lets a client send `Connection` and any other header it likes. */
function rawPost(path: string, body: string, headers: Record<string, string>): Promise<number> {
  const { hostname, port } = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, path, method: 'POST', agent: false, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Headers with which a key holder would choose the operator's account, or pass as someone else (issue 19, item 6). */
const ACCOUNT_HEADERS = {
  'openai-organization': 'org-attacker',
  'openai-project': 'proj_attacker',
  'chatgpt-account-id': 'acct-attacker',
  'x-openai-account-routing-override': 'acct-attacker',
  'anthropic-workspace-id': 'wrkspc_attacker',
  'x-real-ip': '203.0.113.9',
  'true-client-ip': '203.0.113.9',
  'x-forwarded-for': '203.0.113.9',
  forwarded: 'for=203.0.113.9',
  'accept-language': 'de',
};

describe('upstream-bound headers are an allowlist per provider (issue 19, item 6)', () => {
  test('Codex: its session headers reach the openai upstream; account, proxy and hop-by-hop headers do not; the body goes byte for byte', async () => {
    openaiUpstream.reply(sendSse(fixture('openai/text-stream.sse')));
    const body = '{ "model":"gpt-5.5",  "input":"hi", "stream":true }';
    const codex = { originator: 'codex_exec', 'session-id': 's1', 'thread-id': 't1', 'x-codex-turn-metadata': '{"request_kind":"turn"}', 'x-codex-window-id': 'w:0', 'openai-beta': 'responses=experimental', 'x-stainless-retry-count': '0', 'user-agent': 'codex_exec/0.171.0' };
    expect(await rawPost('/second/v1/responses', body, { ...codex, ...ACCOUNT_HEADERS, connection: 'keep-alive, x-codex-turn-state', 'x-codex-turn-state': 'hop' })).toBe(200);
    const sent = openaiUpstream.requests.at(-1)!;
    expect(sent.headers).toMatchObject(codex);
    for (const name of [...Object.keys(ACCOUNT_HEADERS), 'x-codex-turn-state']) expect({ name, value: sent.headers[name] }).toEqual({ name, value: undefined });
    expect(sent.headers.authorization).toBe(`Bearer ${OPENAI_SECRET}`);
    expect(sent.body).toBe(body);
  });

  test("Claude Code: its betas, version and session headers reach the anthropic upstream; nothing chooses the operator's workspace", async () => {
    anthropicUpstream.reply(sendJson(200, fixture('anthropic/text.json')));
    const body = JSON.stringify(request);
    const claude = { 'anthropic-beta': 'claude-code-20250219,effort-2025-11-24', 'anthropic-version': '2023-06-01', 'x-app': 'cli', 'x-claude-code-session-id': 'sess', 'x-claude-code-agent-id': 'agent', 'x-stainless-timeout': '600', 'user-agent': 'claude-cli/2.1.332 (external, cli)' };
    expect(await rawPost('/first/v1/messages', body, { ...claude, ...ACCOUNT_HEADERS, 'x-claude-code-ide-authorization': 'ide-secret', connection: 'keep-alive, x-app' })).toBe(200);
    const sent = anthropicUpstream.requests.at(-1)!;
    const { 'x-app': _hopByHop, ...forwarded } = claude;
    expect(sent.headers).toMatchObject(forwarded);
    for (const name of [...Object.keys(ACCOUNT_HEADERS), 'x-claude-code-ide-authorization', 'x-app']) expect({ name, value: sent.headers[name] }).toEqual({ name, value: undefined });
    expect(sent.body).toBe(body);
  });
});

describe('what the gateway keeps to itself', () => {
  test('the gateway key never reaches an upstream; credentials never reach a log', async () => {
    const all = [...anthropicUpstream.requests, ...openaiUpstream.requests];
    expect(all.length).toBeGreaterThan(5);
    for (const upstream of all) {
      expect(JSON.stringify(upstream.headers)).not.toContain(key);
      expect(upstream.body).not.toContain(key);
    }
    await waitForLogs(gateway, 1);
    const logs = gateway.rawLogs.join('\n');
    for (const secret of [key, ANTHROPIC_SECRET, OPENAI_SECRET, 'Say hi']) expect(logs).not.toContain(secret);
  });

  test('one log line per request, with usage from the final event', async () => {
    anthropicUpstream.reply(sendSse(fixture('anthropic/text-stream.sse')));
    const response = await post('/first/v1/messages', JSON.stringify({ ...request, stream: true }));
    await response.text();
    const line = await logOf(gateway, response.headers.get('request-id'));
    expect(line).toMatchObject({
      msg: 'request',
      route: 'messages',
      model: 'claude-sonnet-5',
      upstream: 'ant',
      status: 200,
      outcome: 'ok',
      keyId: expect.stringMatching(/^key_/),
      usage: { inputTokens: 25, outputTokens: 7, cacheReadTokens: 1024, cacheWriteTokens: 3 },
    });
    expect(line?.ttfbMs).toEqual(expect.any(Number));
    expect(line?.latencyMs).toEqual(expect.any(Number));
  });
});
