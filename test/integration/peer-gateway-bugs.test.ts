import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { logOf, startGateway, type Harness } from '../support/gateway-harness.ts';
import { fixture, sendJson, sendSse, sseEvents, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';
import { validateMessagesStream } from '../support/stream-validators.ts';

/**
 * One test per failure that peer gateways are known for and that could apply to this gateway,
 * numbered as in docs/peer-gateway-failures.md (which links the public reports).
 * @see docs/peer-gateway-failures.md
 */
let ant: UpstreamStub;
let oai: UpstreamStub;
let chat: UpstreamStub;
let gateway: Harness;
let key: string;
let anthropic: Anthropic;
let openai: OpenAI;

beforeAll(async () => {
  [ant, oai, chat] = await Promise.all([startUpstream(), startUpstream(), startUpstream()]);
  gateway = await startGateway({
    config: {
      upstreams: { ant: { type: 'anthropic', baseUrl: ant.url }, oai: { type: 'openai', baseUrl: `${oai.url}/v1` }, chat: { type: 'openai-chat', baseUrl: `${chat.url}/v1` }, sim: { type: 'simulator' } },
      routes: [
        { model: 'claude-via-oai', upstream: 'oai' },
        { model: 'claude-via-chat', upstream: 'chat' },
        { model: 'claude-sim', upstream: 'sim' },
        { model: 'claude-*', upstream: 'ant' },
        { model: 'gpt-via-ant', upstream: 'ant' },
        { model: 'gpt-via-chat', upstream: 'chat' },
        { model: 'gpt-*', upstream: 'oai' },
      ],
    },
  });
  ({ key } = await gateway.issueKey());
  anthropic = new Anthropic({ baseURL: `${gateway.url}/first`, apiKey: key, maxRetries: 0 });
  openai = new OpenAI({ baseURL: `${gateway.url}/second/v1`, apiKey: key, maxRetries: 0 });
});

afterAll(async () => {
  await gateway.close();
  await Promise.all([ant.close(), oai.close(), chat.close()]);
});

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}${path}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers }, body });
const lastBody = (stub: UpstreamStub) => JSON.parse(stub.requests.at(-1)!.body);
const user = (content: string) => [{ role: 'user' as const, content }];

test('peer bug #1: count_tokens is served on every route (no 404 that turns into billable messages calls)', async () => {
  ant.reply(sendJson(200, { input_tokens: 11 }));
  for (const model of ['claude-sonnet-5', 'claude-via-oai', 'claude-via-chat', 'claude-sim']) {
    const response = await post('/first/v1/messages/count_tokens?beta=true', JSON.stringify({ model, messages: user('hi') }));
    expect(response.status).toBe(200);
    expect((await response.json()) as object).toEqual({ input_tokens: expect.any(Number) });
  }
});

test('peer bug #2: the local count_tokens estimate includes system and tools', async () => {
  const count = async (extra: object) => (await anthropic.messages.countTokens({ model: 'claude-via-chat', messages: user('hi'), ...extra })).input_tokens;
  const bare = await count({});
  const withSystem = await count({ system: 'You are a careful engineer. '.repeat(20) });
  const withTools = await count({ tools: [{ name: 'Bash', description: 'Run a command. '.repeat(20), input_schema: { type: 'object', properties: { command: { type: 'string' } } } }] });
  expect(withSystem).toBeGreaterThan(bare + 100);
  expect(withTools).toBeGreaterThan(bare + 80);
});

test('peer bugs #3 and #4: anthropic-beta and its body fields travel together, unchanged', async () => {
  ant.reply(sendJson(200, fixture('anthropic/text.json')));
  const body = JSON.stringify({ model: 'claude-opus-4-8', max_tokens: 10, messages: user('hi'), context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] } });
  const beta = 'claude-code-20250219,context-1m-2025-08-07,context-management-2025-06-27';
  await post('/first/v1/messages?beta=true', body, { 'anthropic-beta': beta });
  expect(ant.requests.at(-1)!.headers['anthropic-beta']).toBe(beta);
  expect(ant.requests.at(-1)!.body).toBe(body);
});

test('peer bug #5: thinking signatures survive the second turn byte-for-byte', async () => {
  ant.reply(sendJson(200, fixture('anthropic/text.json')));
  const signature = 'EqQBCkgIARAB\\u002b/+==\\n';
  const body = `{"model":"claude-sonnet-5","max_tokens":10,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"thinking","thinking":"x","signature":"${signature}"},{"type":"text","text":"b"}]},{"role":"user","content":"c"}]}`;
  await post('/first/v1/messages', body);
  expect(ant.requests.at(-1)!.body).toBe(body);
});

test('peer bug #6: a small reasoning budget never becomes an invalid thinking budget', async () => {
  ant.reply(sendSse(fixture('anthropic/text-stream.sse')));
  await openai.responses.create({ model: 'gpt-via-ant', input: 'hi', reasoning: { effort: 'low' }, max_output_tokens: 900 });
  const sent = lastBody(ant);
  expect(sent.thinking).toBeUndefined();
  await openai.responses.create({ model: 'gpt-via-ant', input: 'hi', reasoning: { effort: 'high' }, max_output_tokens: 5000 });
  expect(lastBody(ant).thinking).toEqual({ type: 'enabled', budget_tokens: 4999 });
});

test('peer bug #7: tool input is never lost in a translated stream (streamed deltas, or only in .done)', async () => {
  const events = sseEvents(fixture('openai/reasoning-tool-stream.sse')).filter((event) => !event.includes('function_call_arguments.delta'));
  oai.reply(sendSse(events));
  const message = await anthropic.messages.stream({ model: 'claude-via-oai', max_tokens: 50, messages: user('weather') }).finalMessage();
  expect(message.content.at(-1)).toMatchObject({ type: 'tool_use', input: { city: 'Paris' } });
});

test('peer bug #8: reasoning is framed as thinking blocks, with one message_start', async () => {
  chat.reply(sendSse(fixture('chat/text-stream.sse')));
  const response = await post('/first/v1/messages', JSON.stringify({ model: 'claude-via-chat', max_tokens: 50, stream: true, messages: user('hi') }));
  const events = validateMessagesStream(await response.text());
  expect(events.filter((event) => event.type === 'message_start')).toHaveLength(1);
  expect(events.filter((event) => event.type === 'content_block_start').map((event) => event.content_block.type)).toEqual(['thinking', 'text']);
});

test('peer bug #9: a tool call cut off by the token limit is reported as max_tokens, not as a finished tool call', async () => {
  const cut = fixture('chat/parallel-tools-stream.sse').replace('"finish_reason":"tool_calls"', '"finish_reason":"length"');
  chat.reply(sendSse(cut));
  const message = await anthropic.messages.create({ model: 'claude-via-chat', max_tokens: 50, messages: user('go') });
  expect(message.stop_reason).toBe('max_tokens');
  const incomplete = fixture('openai/reasoning-tool-stream.sse').replace('"type":"response.completed","sequence_number":12,"response":{"id":"resp_fixture01","object":"response","created_at":1795261165,"status":"completed"', '"type":"response.incomplete","sequence_number":12,"response":{"id":"resp_fixture01","object":"response","created_at":1795261165,"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}').replace('event: response.completed', 'event: response.incomplete');
  oai.reply(sendSse(incomplete));
  expect((await anthropic.messages.create({ model: 'claude-via-oai', max_tokens: 50, messages: user('go') })).stop_reason).toBe('max_tokens');
});

test('peer bug #10: prompt caching is not defeated (cache_control kept on passthrough; the changing billing line never reaches other upstreams)', async () => {
  ant.reply(sendJson(200, fixture('anthropic/text.json')));
  const system = [{ type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1; cch=1;' }, { type: 'text', text: 'Stable prefix', cache_control: { type: 'ephemeral' } }];
  const body = JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 10, system, messages: user('hi') });
  await post('/first/v1/messages', body);
  expect(ant.requests.at(-1)!.body).toBe(body);
  oai.reply(sendSse(fixture('openai/text-stream.sse')));
  await post('/first/v1/messages', JSON.stringify({ model: 'claude-via-oai', max_tokens: 10, system, messages: user('hi'), metadata: { user_id: '{"session_id":"sess-1"}' } }));
  expect(lastBody(oai)).toMatchObject({ instructions: 'Stable prefix', prompt_cache_key: 'sess-1' });
});

test('peer bug #11: usage is complete at the end of a translated stream, cache reads and writes apart', async () => {
  oai.reply(sendSse(fixture('openai/text-stream.sse')));
  const message = await anthropic.messages.stream({ model: 'claude-via-oai', max_tokens: 10, messages: user('hi') }).finalMessage();
  expect(message.usage).toMatchObject({ input_tokens: 1024, cache_read_input_tokens: 1024, cache_creation_input_tokens: 0, output_tokens: 7 });
  ant.reply(sendSse(fixture('anthropic/thinking-tool-stream.sse')));
  const { data: stream, response } = await openai.responses.create({ model: 'gpt-via-ant', input: 'x', stream: true }).withResponse();
  for await (const _event of stream);
  const line = await logOf(gateway, response.headers.get('x-request-id'));
  expect(line?.usage).toEqual({ inputTokens: 25, outputTokens: 42, cacheReadTokens: 1024, cacheWriteTokens: 3 });
});

test('peer bug #13: request bodies far above 2 MB are accepted (the limit is Anthropic’s 32 MB)', async () => {
  ant.reply(sendJson(200, fixture('anthropic/text.json')));
  const response = await post('/first/v1/messages', JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 10, messages: user('x'.repeat(7 * 1024 * 1024)) }));
  expect(response.status).toBe(200);
});

test('peer bug #14: images keep exactly one data: prefix across formats', async () => {
  ant.reply(sendSse(fixture('anthropic/text-stream.sse')));
  await openai.responses.create({ model: 'gpt-via-ant', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' }] }] });
  expect(lastBody(ant).messages[0].content[0]).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } });
  oai.reply(sendSse(fixture('openai/text-stream.sse')));
  await anthropic.messages.create({ model: 'claude-via-oai', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }] }] });
  expect(lastBody(oai).input[0].content[0].image_url).toBe('data:image/png;base64,iVBORw0KGgo=');
});

test('peer bug #15: upstream error envelopes pass through unrewritten', async () => {
  const error = { type: 'error', error: { type: 'invalid_request_error', message: 'messages: text content blocks must be non-empty' }, request_id: 'req_x' };
  ant.reply(sendJson(400, error));
  const response = await post('/first/v1/messages', JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 5, messages: user('') }));
  expect(response.status).toBe(400);
  expect(await response.json()).toEqual(error);
});

test('peer bug #18: Codex item ids are never sent to another provider (store: false)', async () => {
  ant.reply(sendSse(fixture('anthropic/text-stream.sse')));
  await openai.responses.create({ model: 'gpt-via-ant', store: false, input: [{ type: 'message', id: 'msg_01a1', role: 'user', content: [{ type: 'input_text', text: 'hi' }] } as OpenAI.Responses.ResponseInputItem] });
  expect(ant.requests.at(-1)!.body).not.toContain('msg_01a1');
});

test('peer bug #19: a freeform tool call is never printed as text', async () => {
  chat.reply(sendSse(fixture('chat/parallel-tools-stream.sse').replace('"name":"get_weather"', '"name":"apply_patch"').replace(/\{\\"city\\":/, '{\\"input\\":')));
  const response = await openai.responses.create({ model: 'gpt-via-chat', input: 'patch', tools: [{ type: 'custom', name: 'apply_patch' } as unknown as OpenAI.Responses.Tool] });
  expect(response.output.map((item) => item.type)).toEqual(['message', 'custom_tool_call', 'function_call']);
  expect(response.output[1]).toMatchObject({ name: 'apply_patch', input: 'Paris' });
});

test('peer bugs #20 and #21: reasoning continues across turns, and its summary reaches Codex as reasoning_summary events', async () => {
  ant.reply(sendSse(fixture('anthropic/thinking-tool-stream.sse')));
  const types: string[] = [];
  for await (const event of await openai.responses.create({ model: 'gpt-via-ant', input: 'x', stream: true, reasoning: { effort: 'medium', summary: 'auto' } })) types.push(event.type);
  expect(types).toEqual(expect.arrayContaining(['response.reasoning_summary_part.added', 'response.reasoning_summary_text.delta', 'response.reasoning_summary_text.done', 'response.reasoning_summary_part.done']));
});

test('peer bug #25: developer messages are understood on every route', async () => {
  chat.reply(sendSse(fixture('chat/text-stream.sse')));
  await openai.responses.create({ model: 'gpt-via-chat', input: [{ role: 'developer', content: 'Rules.' }, { role: 'user', content: 'hi' }] });
  expect(lastBody(chat).messages[0]).toEqual({ role: 'system', content: 'Rules.' });
});

test('peer bug #26: the models endpoints answer in each format', async () => {
  expect((await openai.models.list()).data.map((model) => model.id)).toContain('claude-via-oai');
  expect((await anthropic.models.list()).data.map((model) => model.id)).toContain('claude-sim');
});
