import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { logOf, startGateway, type Harness } from '../support/gateway-harness.ts';
import { startBedrockFake, textEvents, type BedrockFake } from '../support/bedrock-fake.ts';
import { validateMessagesStream, validateResponsesStream } from '../support/stream-validators.ts';
import { sendJson, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';

/**
 * Claude on Amazon Bedrock through the gateway, with the official SDKs as clients and the
 * SigV4-verifying Bedrock fake as the upstream (the test environment's AWS credentials, test/test,
 * are the ones the fake accepts).
 */
const PROFILE = 'us.anthropic.claude-sonnet-5-v1:0';
const BARE = 'anthropic.claude-haiku-4-5-20251001-v1:0';
const BEDROCK_API_KEY = 'ABSKZmFrZS1iZWRyb2NrLWFwaS1rZXk=';
const APP_PROFILE = 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6';
let fake: BedrockFake;
let anthropicApi: UpstreamStub;
let gateway: Harness;
let key: string;
let anthropic: Anthropic;
let openai: OpenAI;

beforeAll(async () => {
  fake = await startBedrockFake({ credentials: [{ accessKeyId: 'test', secretAccessKey: 'test' }], apiKeys: [BEDROCK_API_KEY] });
  anthropicApi = await startUpstream();
  gateway = await startGateway({
    config: {
      upstreams: {
        br: { type: 'bedrock', region: 'us-east-1', baseUrl: fake.url },
        brKeyed: { type: 'bedrock', region: 'us-east-1', baseUrl: fake.url, apiKeyEnv: 'BEDROCK_API_KEY' },
        ant: { type: 'anthropic', baseUrl: anthropicApi.url },
      },
      routes: [
        { model: 'claude-sonnet-5', upstream: 'br', upstreamModel: PROFILE },
        { model: 'claude-haiku-4-5', upstream: 'br', upstreamModel: BARE },
        { model: 'gpt-on-bedrock', upstream: 'br', upstreamModel: PROFILE },
        { model: 'claude-app-profile', upstream: 'br', upstreamModel: APP_PROFILE },
        { model: 'claude-with-fallback', upstream: 'ant', fallbacks: [{ upstream: 'br', upstreamModel: PROFILE }] },
        { model: 'claude-keyed', upstream: 'brKeyed', upstreamModel: PROFILE },
        // Passes the client's model name to Bedrock (the stack would need "anyModel"), priced or not.
        { model: '*', upstream: 'br', allowUnpriced: true },
      ],
    },
    env: { BEDROCK_API_KEY },
    settings: { keepaliveMs: 100 },
  });
  ({ key } = await gateway.issueKey());
  anthropic = new Anthropic({ baseURL: `${gateway.url}/first`, apiKey: key, maxRetries: 0 });
  openai = new OpenAI({ baseURL: `${gateway.url}/second/v1`, apiKey: key, maxRetries: 0 });
});

afterAll(async () => {
  await gateway.close();
  await Promise.all([fake.close(), anthropicApi.close()]);
});

afterEach(() => fake.chunking(undefined));

const ask = { max_tokens: 50, messages: [{ role: 'user' as const, content: 'hi' }] };

test('Messages clients, streamed and not: Anthropic\'s answers, the model id in the path, usage from the events, no Bedrock metrics', async () => {
  fake.script({ events: textEvents('From Bedrock.', { input_tokens: 21, output_tokens: 4 }) });
  const streamed = await anthropic.messages.stream({ model: 'claude-sonnet-5', ...ask }).finalMessage();
  expect(streamed).toMatchObject({ model: 'claude-sonnet-5', content: [{ type: 'text', text: 'From Bedrock.' }], usage: { input_tokens: 21, output_tokens: 4 } });
  expect(fake.requests.at(-1)).toMatchObject({ action: 'invoke-with-response-stream', modelId: PROFILE, body: { anthropic_version: 'bedrock-2023-05-31', max_tokens: 50 } });
  expect(fake.requests.at(-1)?.body).not.toHaveProperty('model');
  const plain = await anthropic.messages.create({ model: 'claude-sonnet-5', ...ask }).withResponse();
  expect(plain.data.content).toEqual([{ type: 'text', text: 'Hello from the Bedrock fake.' }]);
  expect(fake.requests.at(-1)).toMatchObject({ action: 'invoke', modelId: PROFILE });
  expect(plain.response.headers.get('x-gateway-upstream')).toBe('br');
  const line = await logOf(gateway, plain.response.headers.get('request-id'));
  expect(line).toMatchObject({ upstream: 'br', upstreamModel: PROFILE, usage: { inputTokens: 12, outputTokens: 6 } });

  fake.script({ events: textEvents('Raw.') });
  const raw = await fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-sonnet-5', ...ask, stream: true }) });
  const text = await raw.text();
  validateMessagesStream(text);
  expect(text).not.toContain('invocationMetrics');
});

test('betas move into the body; what Bedrock refuses is dropped and said so', async () => {
  const response = await fetch(`${gateway.url}/first/v1/messages?beta=true`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'anthropic-beta': 'interleaved-thinking-2025-05-14,claude-code-20250219' },
    body: JSON.stringify({ model: 'claude-sonnet-5', ...ask, metadata: { user_id: 'u1' } }),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('x-gateway-dropped')).toBe('anthropic-beta claude-code-20250219, metadata');
  expect(fake.requests.at(-1)?.body).toMatchObject({ anthropic_beta: ['interleaved-thinking-2025-05-14'] });
  expect(fake.requests.at(-1)?.rawPath).toBe(`/model/${encodeURIComponent(PROFILE)}/invoke`);
});

test('a thinking and tool round trip: the signature comes back to Bedrock byte for byte', async () => {
  const signature = 'EqsCCkYIBxgCKkBt/+Sig==';
  fake.script({
    events: [
      { type: 'message_start', message: { id: 'msg_bdrk_1', type: 'message', role: 'assistant', model: 'claude-sonnet-5', content: [], stop_reason: null, usage: { input_tokens: 30, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'I should list the files.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_bdrk_1', name: 'Bash', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"command":"ls"}' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 20 } },
      { type: 'message_stop' },
    ],
  });
  const tools = [{ name: 'Bash', input_schema: { type: 'object' as const, properties: { command: { type: 'string' } } } }];
  const first = await anthropic.messages.stream({ model: 'claude-sonnet-5', max_tokens: 2_000, thinking: { type: 'enabled', budget_tokens: 1_024 }, tools, messages: [{ role: 'user', content: 'list' }] }).finalMessage();
  expect(first.content[0]).toMatchObject({ type: 'thinking', signature });
  await anthropic.messages.create({
    model: 'claude-sonnet-5',
    max_tokens: 2_000,
    thinking: { type: 'enabled', budget_tokens: 1_024 },
    tools,
    messages: [
      { role: 'user', content: 'list' },
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_bdrk_1', content: 'a.txt' }] },
    ],
  });
  const sent = fake.requests.at(-1)!;
  expect(sent.rawBody).toContain(JSON.stringify({ type: 'thinking', thinking: 'I should list the files.', signature }));
  expect((sent.body.messages as { content: unknown[] }[])[1]?.content[0]).toEqual({ type: 'thinking', thinking: 'I should list the files.', signature });
});

test('an application inference profile ARN is one encoded path segment, signed as such (the fake recomputes the signature)', async () => {
  fake.script({ events: textEvents('Via the ARN.') });
  const message = await anthropic.messages.stream({ model: 'claude-app-profile', ...ask }).finalMessage();
  expect(message.content).toEqual([{ type: 'text', text: 'Via the ARN.' }]);
  expect(fake.requests.at(-1)).toMatchObject({ modelId: APP_PROFILE, rawPath: `/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aapplication-inference-profile%2Fa1b2c3d4e5f6/invoke-with-response-stream` });
  // An ARN cannot count tokens: estimated, Bedrock not asked.
  const before = fake.requests.length;
  const counted = await anthropic.messages.countTokens({ model: 'claude-app-profile', messages: [{ role: 'user', content: 'count me' }] }).withResponse();
  expect(counted.response.headers.get('x-token-count')).toBe('estimated');
  expect(fake.requests.length).toBe(before);
});

test('a Bedrock API key (apiKeyEnv) is sent as a bearer token instead of a signature', async () => {
  fake.script({ events: textEvents('With an API key.') });
  const message = await anthropic.messages.stream({ model: 'claude-keyed', ...ask }).finalMessage();
  expect(message.content).toEqual([{ type: 'text', text: 'With an API key.' }]);
  expect(fake.requests.at(-1)?.headers).toMatchObject({ authorization: `Bearer ${BEDROCK_API_KEY}` });
  expect(fake.requests.at(-1)?.headers['x-amz-date']).toBeUndefined();
});

test('Responses clients (Codex) reach Bedrock Claude through the translator, streamed and not', async () => {
  fake.script({ events: textEvents('Codex on Bedrock.') }, { events: textEvents('Again.') });
  const raw = await fetch(`${gateway.url}/second/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-on-bedrock', input: 'hi', stream: true }) });
  validateResponsesStream(await raw.text());
  expect(fake.requests.at(-1)).toMatchObject({ action: 'invoke-with-response-stream', modelId: PROFILE });
  const response = await openai.responses.create({ model: 'gpt-on-bedrock', input: 'hi' });
  expect(response.output_text).toBe('Again.');
});

test('structured output from a Responses client (Codex\'s title request) reaches Bedrock as output_config.format', async () => {
  const schema = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'], additionalProperties: false };
  fake.script({ events: textEvents('{"title":"Bedrock"}') });
  const response = await openai.responses.create({ model: 'gpt-on-bedrock', input: 'name this', text: { format: { type: 'json_schema', name: 'codex_output_schema', strict: true, schema } } });
  expect(JSON.parse(response.output_text)).toEqual({ title: 'Bedrock' });
  expect(fake.requests.at(-1)?.body.output_config).toEqual({ format: { type: 'json_schema', schema } });
});

test('count_tokens: Bedrock CountTokens for a bare model id, the local estimate for an inference profile', async () => {
  const counted = await anthropic.messages.countTokens({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'count me' }] }).withResponse();
  expect(counted.response.headers.get('x-token-count')).toBeNull();
  expect(fake.requests.at(-1)).toMatchObject({ action: 'count-tokens', modelId: BARE });
  const invoked = JSON.parse(Buffer.from((fake.requests.at(-1)?.body.input as { invokeModel: { body: string } }).invokeModel.body, 'base64').toString('utf8'));
  expect(invoked).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', messages: [{ role: 'user', content: 'count me' }] });
  expect(counted.data.input_tokens).toBe(Math.ceil(Buffer.from(JSON.stringify(invoked)).length / 4));
  const before = fake.requests.length;
  const estimated = await anthropic.messages.countTokens({ model: 'claude-sonnet-5', messages: [{ role: 'user', content: 'count me' }] }).withResponse();
  expect(estimated.response.headers.get('x-token-count')).toBe('estimated');
  expect(fake.requests.length).toBe(before);
});

test.each([
  ['ThrottlingException', 429, Anthropic.RateLimitError, 429, 'rate_limit_error'],
  ['ServiceUnavailableException', 503, Anthropic.InternalServerError, 529, 'overloaded_error'],
  ['ModelNotReadyException', 429, Anthropic.InternalServerError, 529, 'overloaded_error'],
  ['ValidationException', 400, Anthropic.BadRequestError, 400, 'invalid_request_error'],
  ['AccessDeniedException', 403, Anthropic.PermissionDeniedError, 403, 'permission_error'],
] as const)('%s becomes the status and type Anthropic clients expect', async (exception, status, ErrorClass, clientStatus, type) => {
  fake.script({ error: { type: exception, status, message: `${exception} for arn:aws:bedrock:us-east-1:123456789012:inference-profile/${PROFILE}`, headers: { 'retry-after': '4' } } });
  const error = (await anthropic.messages.create({ model: 'claude-sonnet-5', ...ask }).catch((caught: unknown) => caught)) as InstanceType<typeof Anthropic.APIError>;
  expect(error).toBeInstanceOf(ErrorClass);
  expect(error.status).toBe(clientStatus);
  expect(error.error).toMatchObject({ type: 'error', error: { type, message: `${exception} for <resource>` } });
  expect(error.headers?.get('retry-after')).toBe('4');
});

test('an exception frame mid-stream ends the stream with event: error; the log says the upstream failed', async () => {
  fake.script({ events: textEvents('Cut short').slice(0, 3), exceptionAfter: { type: 'modelStreamErrorException', message: 'The model stream failed.' } });
  const response = await fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-sonnet-5', ...ask, stream: true }) });
  const text = await response.text();
  expect(response.status).toBe(200);
  expect(text).toMatch(/^event: message_start\n/);
  expect(text.endsWith('event: error\ndata: {"type":"error","error":{"type":"api_error","message":"The model stream failed."}}\n\n')).toBe(true);
  expect(await logOf(gateway, response.headers.get('request-id'))).toMatchObject({ status: 200, outcome: 'upstream_error' });
  await expect(anthropic.messages.stream({ model: 'claude-sonnet-5', ...ask }).finalMessage()).resolves.toBeDefined();
});

test('frames split at random byte boundaries still make clean streams; a corrupt CRC is a clean in-format error', async () => {
  for (const seed of [11, 12, 13, 14, 15, 16]) {
    fake.chunking(seed);
    fake.script({ events: textEvents(`Chunked ${seed}.`) });
    const message = await anthropic.messages.stream({ model: 'claude-sonnet-5', ...ask }).finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: `Chunked ${seed}.` }]);
  }
  fake.script({ events: textEvents('Corrupt'), corruptAfter: 2 });
  const response = await fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-sonnet-5', ...ask, stream: true }) });
  const text = await response.text();
  expect(text.endsWith('event: error\ndata: {"type":"error","error":{"type":"api_error","message":"The upstream stream was corrupt."}}\n\n')).toBe(true);
  expect(text.split('event: ').length - 1).toBe(3);
});

test('Bedrock sends no pings: the gateway does, during silence', async () => {
  fake.script({ events: textEvents('Slow.'), gapMs: 350 });
  const response = await fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-sonnet-5', ...ask, stream: true }) });
  const text = await response.text();
  expect(text).toContain('event: ping\ndata: {"type":"ping"}\n\n');
  validateMessagesStream(text.replaceAll('event: ping\ndata: {"type":"ping"}\n\n', ''));
});

test('the Anthropic API overloaded: Bedrock serves the turn as a fallback, with the same request bytes', async () => {
  anthropicApi.reply(sendJson(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
  fake.script({ events: textEvents('Served by Bedrock.') });
  const body = JSON.stringify({ model: 'claude-with-fallback', ...ask, stream: true, system: [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }] });
  const response = await fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
  expect(response.headers.get('x-gateway-upstream')).toBe('br');
  expect(await response.text()).toContain('Served by Bedrock.');
  expect(fake.requests.at(-1)?.rawBody).toContain('"system":[{"type":"text","text":"sys","cache_control":{"type":"ephemeral"}}]');
});

test.each(['.', '..', 'anthropic.claude/../../x', 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/..'])(
  'a client model name %j that is no Bedrock model id is refused (400 naming it) before anything is signed or sent',
  async (model) => {
    const sent = fake.requests.length;
    const response = await fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, ...ask }) });
    const body = (await response.json()) as { error: { type: string; message: string } };
    expect({ status: response.status, type: body.error.type }).toEqual({ status: 400, type: 'invalid_request_error' });
    expect(body.error.message).toContain(`"${model}" is not an Amazon Bedrock model id`);
    expect(fake.requests.length).toBe(sent);
  },
);

test('request tags (the body member and its beta) are left out before Bedrock and said so; the Anthropic API gets them as sent', async () => {
  const body = { model: 'claude-sonnet-5', ...ask, tags: { billing_group: 'ml-research' } };
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'anthropic-beta': 'request-tags-2026-08-21,interleaved-thinking-2025-05-14' };
  const toBedrock = await fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', headers, body: JSON.stringify(body) });
  expect(toBedrock.status).toBe(200);
  expect(toBedrock.headers.get('x-gateway-dropped')).toBe('anthropic-beta request-tags-2026-08-21, tags');
  const sent = fake.requests.at(-1);
  expect(sent?.body).not.toHaveProperty('tags');
  expect(sent?.body).toMatchObject({ anthropic_beta: ['interleaved-thinking-2025-05-14'] });

  anthropicApi.reply(sendJson(200, { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-with-fallback', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 1 } }));
  const raw = JSON.stringify({ ...body, model: 'claude-with-fallback' });
  const toAnthropic = await fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', headers, body: raw });
  expect(toAnthropic.status).toBe(200);
  expect(toAnthropic.headers.get('x-gateway-dropped')).toBeNull();
  expect(anthropicApi.requests.at(-1)?.body).toBe(raw);
  expect(anthropicApi.requests.at(-1)?.headers['anthropic-beta']).toBe('request-tags-2026-08-21,interleaved-thinking-2025-05-14');
});
