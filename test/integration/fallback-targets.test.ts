import { jest } from '@jest/globals';
import { packCarrier } from '../../lambda/translate/reasoning-carry.ts';
import { logOf, startGateway, type Harness } from '../support/gateway-harness.ts';
import { startBedrockFake, textEvents, type BedrockAnswer, type BedrockFake } from '../support/bedrock-fake.ts';
import { validateMessagesStream } from '../support/stream-validators.ts';
import { fixture, sendJson, sendSse, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';

/**
 * Fallbacks across providers: Amazon Bedrock's exceptions (as HTTP errors, or as the first frame
 * of its event stream) hand over exactly as the Anthropic API's statuses do; reasoning reaches a
 * fallback only where that target accepts it; the request deadline bounds the tries; the log
 * and the status describe the try that answered.
 */
const PROFILE = 'us.anthropic.claude-sonnet-5-v1:0';
const textStream = fixture('anthropic/text-stream.sse');
const overloaded = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
let bedrock: BedrockFake;
let anthropicApi: UpstreamStub;
let openaiApi: UpstreamStub;
let otherOrg: UpstreamStub;
let gateway: Harness;
let key: string;

beforeAll(async () => {
  // The test environment's AWS credentials (test/test) are the ones the fake accepts.
  bedrock = await startBedrockFake({ credentials: [{ accessKeyId: 'test', secretAccessKey: 'test' }] });
  [anthropicApi, openaiApi, otherOrg] = await Promise.all([startUpstream(), startUpstream(), startUpstream()]);
  gateway = await startGateway({
    config: {
      upstreams: {
        br: { type: 'bedrock', region: 'us-east-1', baseUrl: bedrock.url },
        ant: { type: 'anthropic', baseUrl: anthropicApi.url },
        oai: { type: 'openai', baseUrl: `${openaiApi.url}/v1` },
        oaiOtherOrg: { type: 'openai', baseUrl: `${otherOrg.url}/v1` },
      },
      routes: [
        { model: 'claude-bedrock-first', upstream: 'br', upstreamModel: PROFILE, fallbacks: [{ upstream: 'ant', upstreamModel: 'claude-sonnet-5' }] },
        { model: 'claude-to-bedrock', upstream: 'ant', upstreamModel: 'claude-sonnet-5', fallbacks: [{ upstream: 'br', upstreamModel: PROFILE }] },
        { model: 'claude-to-openai', upstream: 'ant', upstreamModel: 'claude-sonnet-5', fallbacks: [{ upstream: 'oai', upstreamModel: 'gpt-5.5' }] },
        { model: 'gpt-5.5', upstream: 'oai', fallbacks: [{ upstream: 'oaiOtherOrg' }] },
      ],
    },
    settings: { firstByteTimeoutMs: 2_000 },
    health: { failuresToCool: 1_000 },
  });
  ({ key } = await gateway.issueKey());
});

afterAll(async () => {
  await gateway.close();
  await Promise.all([bedrock.close(), anthropicApi.close(), openaiApi.close(), otherOrg.close()]);
});

const post = (harness: Harness, body: Record<string, unknown>) =>
  fetch(`${harness.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

const ask = (model: string, extra: Record<string, unknown> = {}) => post(gateway, { model, max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }], ...extra });

const exception = (type: string, status: number, headers?: Record<string, string>): BedrockAnswer => ({ error: { type, status, message: `${type} from the fake`, ...(headers ? { headers } : {}) } });
const inStream = (type: string): BedrockAnswer => ({ events: [], exceptionAfter: { type, message: `${type} as the first frame` } });

test.each([
  ['ThrottlingException (429, retry-after)', exception('ThrottlingException', 429, { 'retry-after': '3' }), { status: 429 }],
  ['ServiceQuotaExceededException', exception('ServiceQuotaExceededException', 429), { status: 429 }],
  ['ServiceUnavailableException', exception('ServiceUnavailableException', 503), { status: 529 }],
  ['ModelNotReadyException', exception('ModelNotReadyException', 429), { status: 529 }],
  ['InternalServerException', exception('InternalServerException', 500), { status: 500 }],
  ['ModelTimeoutException', exception('ModelTimeoutException', 408), { status: 504 }],
  ['throttlingException as the first frame', inStream('throttlingException'), { error: 'error event in place of the answer' }],
  ['serviceUnavailableException as the first frame', inStream('serviceUnavailableException'), { error: 'error event in place of the answer' }],
  ['modelTimeoutException as the first frame', inStream('modelTimeoutException'), { error: 'error event in place of the answer' }],
  ['internalServerException as the first frame', inStream('internalServerException'), { error: 'error event in place of the answer' }],
])('Bedrock primary, %s: the Anthropic fallback serves, the client sees only its answer', async (_name, answer, tried) => {
  bedrock.script(answer);
  anthropicApi.reply(sendSse(textStream));
  const response = await ask('claude-bedrock-first');
  expect(response.status).toBe(200);
  expect(response.headers.get('x-gateway-upstream')).toBe('ant');
  const text = await response.text();
  validateMessagesStream(text);
  // Byte for byte, but for the model name, which is the client's (the fallback was asked for another).
  expect(text).toBe(textStream.replace('"model":"claude-sonnet-5"', '"model":"claude-bedrock-first"'));
  const line = await logOf(gateway, response.headers.get('request-id'));
  expect(line).toMatchObject({ status: 200, upstream: 'ant' });
  expect(line.attempts).toEqual([
    { upstream: 'br', model: PROFILE, ...tried, ms: expect.any(Number) },
    { upstream: 'ant', model: 'claude-sonnet-5', status: 200, ms: expect.any(Number) },
  ]);
});

test('a Bedrock refusal of the request itself (ValidationException) is answered at once, not retried elsewhere', async () => {
  bedrock.script(exception('ValidationException', 400));
  const before = anthropicApi.requests.length;
  const response = await ask('claude-bedrock-first');
  expect(response.status).toBe(400);
  expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  expect(anthropicApi.requests.length).toBe(before);
});

test('the status and the log describe the try that answered, not an earlier one that handed over', async () => {
  // The Anthropic API opens a 200 stream whose first event is an overload; Bedrock then is unavailable too.
  anthropicApi.reply(sendSse(`event: error\ndata: ${JSON.stringify(overloaded)}\n\n`));
  bedrock.script(exception('ServiceUnavailableException', 503));
  const response = await ask('claude-to-bedrock');
  expect(response.status).toBe(529);
  expect(response.headers.get('x-gateway-upstream')).toBe('br');
  expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
  const line = await logOf(gateway, response.headers.get('request-id'));
  expect(line).toMatchObject({ status: 529, upstream: 'br', upstreamModel: PROFILE });
  expect(line.attempts).toEqual([
    { upstream: 'ant', model: 'claude-sonnet-5', error: 'error event in place of the answer', ms: expect.any(Number) },
    { upstream: 'br', model: PROFILE, status: 529, ms: expect.any(Number) },
  ]);
});

/** A conversation whose last assistant turn thought (signed) before calling a tool. */
const SIGNATURE = 'EqQBCkgIARABGAIiQL+signed/by/the/Claude/API==';
const THINKING_BLOCK = { type: 'thinking', thinking: 'The user wants the weather.', signature: SIGNATURE };
const toolTurn = {
  max_tokens: 2_000,
  stream: true,
  thinking: { type: 'enabled', budget_tokens: 1_024 },
  tools: [{ name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
  messages: [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: [THINKING_BLOCK, { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'Sunny, 21 C' }] },
  ],
};

test('reasoning: a Claude thinking block goes to a Bedrock fallback byte for byte (signatures are valid across Claude platforms)', async () => {
  anthropicApi.reply(sendJson(529, overloaded));
  bedrock.script({ events: textEvents('Sunny in Paris.') });
  const response = await ask('claude-to-bedrock', toolTurn);
  expect(response.headers.get('x-gateway-upstream')).toBe('br');
  expect(await response.text()).toContain('Sunny in Paris.');
  expect(anthropicApi.requests.at(-1)?.body).toContain(JSON.stringify(THINKING_BLOCK));
  expect(bedrock.requests.at(-1)?.rawBody).toContain(JSON.stringify(toolTurn.messages));
  expect(response.headers.get('x-gateway-dropped')).toBeNull();
});

test('reasoning another provider issued leaves the request for every Claude target of the chain, the rest byte for byte', async () => {
  const packed = { type: 'thinking', thinking: 'Plan the call.', signature: packCarrier({ provider: 'openai', id: 'rs_1', encryptedContent: 'gAAA' }, 'Plan the call.') };
  const switched = { ...toolTurn, messages: [toolTurn.messages[0], { role: 'assistant', content: [packed, ...toolTurn.messages[1]!.content.slice(1)] }, toolTurn.messages[2]] };
  anthropicApi.reply(sendJson(529, overloaded));
  bedrock.script({ events: textEvents('Sunny in Paris.') });
  const response = await ask('claude-to-bedrock', switched);
  expect(response.headers.get('x-gateway-upstream')).toBe('br');
  expect(response.headers.get('x-gateway-dropped')).toContain('reasoning from another provider');
  expect(await response.text()).toContain('Sunny in Paris.');
  const toAnthropic = JSON.parse(anthropicApi.requests.at(-1)?.body as string);
  const toBedrock = JSON.parse(bedrock.requests.at(-1)?.rawBody as string);
  for (const sent of [toAnthropic, toBedrock]) {
    expect(sent.messages).toEqual([switched.messages[0], { role: 'assistant', content: switched.messages[1]!.content.slice(1) }, switched.messages[2]]);
    expect(sent.thinking).toBeUndefined();
    expect(sent.tools).toEqual(switched.tools);
  }
});

test('reasoning: an OpenAI fallback gets the conversation without the Claude thinking block, and says so', async () => {
  anthropicApi.reply(sendJson(529, overloaded));
  openaiApi.reply(sendSse(fixture('openai/text-stream.sse')));
  const response = await ask('claude-to-openai', toolTurn);
  expect(response.status).toBe(200);
  expect(response.headers.get('x-gateway-upstream')).toBe('oai');
  expect(response.headers.get('x-gateway-dropped')).toContain('reasoning from another provider');
  validateMessagesStream(await response.text());
  const sent = openaiApi.requests.at(-1)?.body as string;
  expect(sent).not.toContain(SIGNATURE);
  expect(JSON.parse(sent)).toMatchObject({ model: 'gpt-5.5', input: expect.arrayContaining([expect.objectContaining({ type: 'function_call', call_id: 'toolu_01' })]) });
});

test("reasoning: an OpenAI fallback of another organization refuses the first one's encrypted reasoning; the turn goes on without it", async () => {
  openaiApi.reply(sendJson(529, { error: { message: 'overloaded', type: 'server_error', code: 'server_is_overloaded' } }));
  // OpenAI's answer to reasoning another organization encrypted.
  otherOrg.reply((request, res) => {
    if (!request.body.includes('"type":"reasoning"')) return sendSse(fixture('openai/text-stream.sse'))(request, res);
    return sendJson(400, { error: { message: 'The encrypted content gAAA...org1 could not be verified.', type: 'invalid_request_error', param: null, code: 'invalid_encrypted_content' } })(request, res);
  });
  const input = [
    { role: 'user', content: [{ type: 'input_text', text: 'List the files' }] },
    { type: 'reasoning', id: 'rs_org1', summary: [], encrypted_content: 'gAAAAorg1' },
    { type: 'function_call', call_id: 'call_1', name: 'shell', arguments: '{"command":["ls"]}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'a.ts' },
  ];
  const before = otherOrg.requests.length;
  const response = await fetch(`${gateway.url}/second/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-5.5', input, stream: true, store: false, include: ['reasoning.encrypted_content'] }) });
  expect(response.status).toBe(200);
  expect(response.headers.get('x-gateway-upstream')).toBe('oaiOtherOrg');
  expect(response.headers.get('x-gateway-dropped')).toContain('reasoning the upstream could not verify');
  await response.text();
  const [refused, served] = otherOrg.requests.slice(before);
  expect(JSON.parse(refused!.body).input).toEqual(input);
  expect(JSON.parse(served!.body).input).toEqual(input.filter((item) => !('type' in item && item.type === 'reasoning')));
  const line = await logOf(gateway, response.headers.get('request-id'));
  expect(line.attempts).toEqual([
    { upstream: 'oai', status: 529, ms: expect.any(Number) },
    { upstream: 'oaiOtherOrg', status: 400, ms: expect.any(Number) },
    { upstream: 'oaiOtherOrg', status: 200, ms: expect.any(Number) },
  ]);
});

test("reasoning: when the request's time runs out on the refusal of another organization's reasoning, the client gets that refusal", async () => {
  openaiApi.reply(sendJson(529, { error: { message: 'overloaded', type: 'server_error', code: 'server_is_overloaded' } }));
  const refusal = { error: { message: 'The encrypted content gAAA...org1 could not be verified.', type: 'invalid_request_error', param: null, code: 'invalid_encrypted_content' } };
  const realNow = Date.now.bind(Date);
  otherOrg.reply((request, res) => {
    // The request's deadline (the function timeout less its margin) passes while the refusal is on its way.
    jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 3_600_000);
    return sendJson(400, refusal)(request, res);
  });
  const before = otherOrg.requests.length;
  try {
    const input = [{ role: 'user', content: [{ type: 'input_text', text: 'List the files' }] }, { type: 'reasoning', id: 'rs_org1', summary: [], encrypted_content: 'gAAAAorg1' }];
    const response = await fetch(`${gateway.url}/second/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-5.5', input, stream: true, store: false }) });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-gateway-upstream')).toBe('oaiOtherOrg');
    expect(await response.json()).toEqual(refusal);
    expect(otherOrg.requests.length).toBe(before + 1);
    const line = await logOf(gateway, response.headers.get('request-id'));
    expect(line).toMatchObject({ status: 400, upstream: 'oaiOtherOrg' });
    expect(line.attempts).toEqual([
      { upstream: 'oai', status: 529, ms: expect.any(Number) },
      { upstream: 'oaiOtherOrg', status: 400, ms: expect.any(Number) },
    ]);
  } finally {
    jest.restoreAllMocks();
  }
});

test('the request deadline bounds the tries: a primary silent until the deadline leaves no time for a fallback', async () => {
  // A 3.5 s function timeout with a 2 s margin leaves the request 1.5 s, less than the first-byte timeout.
  const short = await startGateway({
    config: { upstreams: { ant: { type: 'anthropic', baseUrl: anthropicApi.url }, br: { type: 'bedrock', region: 'us-east-1', baseUrl: bedrock.url } }, routes: [{ model: '*', upstream: 'ant', fallbacks: [{ upstream: 'br', upstreamModel: PROFILE }] }] },
    functionTimeoutMs: 3_500,
    settings: { deadlineMarginMs: 2_000, firstByteTimeoutMs: 60_000 },
    shareStoreWith: gateway,
  });
  try {
    anthropicApi.reply(() => {});
    const before = bedrock.requests.length;
    const response = await post(short, { model: 'claude-sonnet-5', max_tokens: 20, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(response.status).toBe(504);
    expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'timeout_error' } });
    expect(bedrock.requests.length).toBe(before);
    const line = await logOf(short, response.headers.get('request-id'));
    expect(line).toMatchObject({ status: 504, upstream: 'ant', outcome: 'upstream_timeout' });
  } finally {
    await short.close();
  }
});
