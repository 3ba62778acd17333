import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { logOf, startGateway, type Harness } from '../support/gateway-harness.ts';
import { fixture, sendJson, sendSse, sseEvents, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';

let messagesUpstream: UpstreamStub;
let responsesUpstream: UpstreamStub;
let chatUpstream: UpstreamStub;
let gateway: Harness;
let anthropic: Anthropic;
let openai: OpenAI;

beforeAll(async () => {
  messagesUpstream = await startUpstream();
  responsesUpstream = await startUpstream();
  chatUpstream = await startUpstream();
  gateway = await startGateway({
    config: {
      upstreams: {
        claude: { type: 'anthropic', baseUrl: messagesUpstream.url, apiKeyEnv: 'ANT' },
        gpt: { type: 'openai', baseUrl: `${responsesUpstream.url}/v1`, apiKeyEnv: 'OAI' },
        vllm: { type: 'openai-chat', baseUrl: `${chatUpstream.url}/v1` },
      },
      routes: [
        { model: 'claude-via-gpt', upstream: 'gpt', upstreamModel: 'gpt-5.5' },
        { model: 'claude-via-vllm', upstream: 'vllm', upstreamModel: 'qwen3-coder' },
        { model: 'gpt-via-claude', upstream: 'claude', upstreamModel: 'claude-sonnet-5' },
        { model: 'gpt-via-vllm', upstream: 'vllm', upstreamModel: 'qwen3-coder' },
      ],
    },
    env: { ANT: 'sk-ant-up', OAI: 'sk-oai-up' },
  });
  const { key } = await gateway.issueKey();
  anthropic = new Anthropic({ baseURL: `${gateway.url}/first`, apiKey: key, maxRetries: 0 });
  openai = new OpenAI({ baseURL: `${gateway.url}/second/v1`, apiKey: key, maxRetries: 0 });
});

afterAll(async () => {
  await gateway.close();
  await Promise.all([messagesUpstream.close(), responsesUpstream.close(), chatUpstream.close()]);
});

const weather = { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };
const lastBody = (stub: UpstreamStub) => JSON.parse(stub.requests.at(-1)!.body);

describe('Messages client (Claude Code, Anthropic SDK) via a Responses upstream', () => {
  test('tool and reasoning round trip: thinking is signed, and the next turn hands OpenAI its own reasoning item back', async () => {
    responsesUpstream.reply(sendSse(sseEvents(fixture('openai/reasoning-tool-stream.sse'))));
    const first = await anthropic.messages
      .stream({
        model: 'claude-via-gpt',
        max_tokens: 4000,
        thinking: { type: 'enabled', budget_tokens: 2048 },
        system: [{ type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1; cch=abc;' }, { type: 'text', text: 'You are helpful.' }],
        tools: [weather],
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
      })
      .finalMessage();
    expect(first.model).toBe('claude-via-gpt');
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content.map((block) => block.type)).toEqual(['thinking', 'tool_use']);
    expect(first.content[1]).toMatchObject({ id: 'call_fixture01', name: 'get_weather', input: { city: 'Paris' } });

    const sent = lastBody(responsesUpstream);
    expect(responsesUpstream.requests.at(-1)!.headers.authorization).toBe('Bearer sk-oai-up');
    expect(sent).toMatchObject({ model: 'gpt-5.5', stream: true, store: false, instructions: 'You are helpful.', include: ['reasoning.encrypted_content'], reasoning: { effort: 'low' } });
    expect(sent.tools).toEqual([{ type: 'function', name: 'get_weather', description: 'Weather for a city', parameters: weather.input_schema, strict: false }]);

    responsesUpstream.reply(sendSse(fixture('openai/text-stream.sse')));
    const second = await anthropic.messages.create({
      model: 'claude-via-gpt',
      max_tokens: 4000,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      tools: [weather],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_fixture01', content: 'Sunny' }] },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'Hi there — ✓' }]);
    expect(lastBody(responsesUpstream).input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] },
      { type: 'reasoning', id: 'rs_fixture01', summary: [{ type: 'summary_text', text: '**Planning** I will call the tool.' }], encrypted_content: 'gAAAAAFIXTURE-ENCRYPTED' },
      { type: 'function_call', call_id: 'call_fixture01', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_fixture01', output: 'Sunny' },
    ]);
  });

  test('what a translation drops is said in a header and in the log', async () => {
    responsesUpstream.reply(sendSse(fixture('openai/text-stream.sse')));
    const { response } = await anthropic.messages.create({ model: 'claude-via-gpt', max_tokens: 100, stop_sequences: ['END'], messages: [{ role: 'user', content: 'hi' }], top_k: 5 } as Anthropic.MessageCreateParamsNonStreaming).withResponse();
    expect(response.headers.get('x-gateway-dropped')).toBe('top_k, stop_sequences');
    const line = await logOf(gateway, response.headers.get('request-id'));
    expect(line).toMatchObject({ upstream: 'gpt', upstreamModel: 'gpt-5.5', dropped: ['top_k', 'stop_sequences'], usage: { inputTokens: 1024, cacheReadTokens: 1024, outputTokens: 7 } });
  });
});

describe('Messages client via a Chat Completions upstream', () => {
  test('streamed text with reasoning, usage held until the usage chunk', async () => {
    chatUpstream.reply(sendSse(sseEvents(fixture('chat/text-stream.sse'))));
    const stream = anthropic.messages.stream({ model: 'claude-via-vllm', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    stream.on('text', (delta) => (text += delta));
    const message = await stream.finalMessage();
    expect(text).toBe('Hello wörld ✓');
    expect(message.content[0]).toMatchObject({ type: 'thinking', thinking: 'Think first.' });
    expect(message.usage).toMatchObject({ input_tokens: 1024, cache_read_input_tokens: 1024, output_tokens: 40 });
    const sent = lastBody(chatUpstream);
    expect(sent).toMatchObject({ model: 'qwen3-coder', stream: true, stream_options: { include_usage: true }, max_tokens: 100 });
    expect(chatUpstream.requests.at(-1)!.headers.authorization).toBeUndefined();
  });

  test('parallel tool calls, then the results go back as tool messages right after the calls', async () => {
    chatUpstream.reply(sendSse(fixture('chat/parallel-tools-stream.sse')));
    const first = await anthropic.messages.create({ model: 'claude-via-vllm', max_tokens: 100, tools: [weather], messages: [{ role: 'user', content: 'go' }] });
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content.filter((block) => block.type === 'tool_use').map((block) => (block as Anthropic.ToolUseBlock).input)).toEqual([{ city: 'Paris' }, { tz: 'UTC' }]);
    chatUpstream.reply(sendSse(fixture('chat/text-stream.sse')));
    await anthropic.messages.create({
      model: 'claude-via-vllm',
      max_tokens: 100,
      tools: [weather],
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_fixA', content: 'Sunny' }, { type: 'tool_result', tool_use_id: 'call_fixB', content: 'Noon', is_error: true }, { type: 'text', text: 'thanks' }] },
      ],
    });
    expect(lastBody(chatUpstream).messages.slice(1)).toEqual([
      { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'call_fixA', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }, { id: 'call_fixB', type: 'function', function: { name: 'get_time', arguments: '{"tz":"UTC"}' } }] },
      { role: 'tool', tool_call_id: 'call_fixA', content: 'Sunny' },
      { role: 'tool', tool_call_id: 'call_fixB', content: 'Error: Noon' },
      { role: 'user', content: 'thanks' },
    ]);
  });
});

describe('Responses client (Codex, OpenAI SDK) via a Messages upstream', () => {
  test('reasoning round trip: the next turn hands Anthropic its thinking block byte-identical', async () => {
    messagesUpstream.reply(sendSse(sseEvents(fixture('anthropic/thinking-tool-stream.sse'))));
    const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false }];
    const first = await openai.responses
      .stream({ model: 'gpt-via-claude', input: [{ role: 'developer', content: 'Be brief.' }, { role: 'user', content: 'Weather?' }], tools, reasoning: { effort: 'medium', summary: 'auto' }, include: ['reasoning.encrypted_content'] })
      .finalResponse();
    expect(first.output.map((item) => item.type)).toEqual(['reasoning', 'function_call']);
    expect(first.output[1]).toMatchObject({ call_id: 'toolu_01Fixture', name: 'get_weather', arguments: '{"city": "Paris"}' });
    const sent = lastBody(messagesUpstream);
    expect(sent).toMatchObject({ model: 'claude-sonnet-5', stream: true, system: [{ type: 'text', text: 'Be brief.' }], thinking: { type: 'enabled', budget_tokens: 8192 }, max_tokens: 32000 });
    expect(messagesUpstream.requests.at(-1)!.headers['x-api-key']).toBe('sk-ant-up');

    messagesUpstream.reply(sendSse(fixture('anthropic/text-stream.sse')));
    const second = await openai.responses.create({
      model: 'gpt-via-claude',
      tools,
      reasoning: { effort: 'medium' },
      input: [{ role: 'user', content: 'Weather?' }, ...(first.output as OpenAI.Responses.ResponseInputItem[]), { type: 'function_call_output', call_id: 'toolu_01Fixture', output: 'Sunny' }],
    });
    expect(second.output_text).toBe('Hi there — ünïcödé ✓ 你好!');
    expect(lastBody(messagesUpstream).messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'The user wants the weather.', signature: 'EqQBCkgIARABGAIiQL+fixture/signature==' },
          { type: 'tool_use', id: 'toolu_01Fixture', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01Fixture', content: [{ type: 'text', text: 'Sunny' }] }] },
    ]);
  });

  test("Codex's apply_patch custom tool round-trips as a custom_tool_call", async () => {
    const patch = '*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch';
    const toolUse = `event: message_start\ndata: {"type":"message_start","message":{"id":"m1","usage":{"input_tokens":9,"output_tokens":1}}}\n\nevent: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_p","name":"apply_patch","input":{}}}\n\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":${JSON.stringify(JSON.stringify({ input: patch }))}}}\n\nevent: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\nevent: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":20}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n`;
    messagesUpstream.reply(sendSse(toolUse));
    const tools = [{ type: 'custom', name: 'apply_patch', description: 'Edit files', format: { type: 'grammar', syntax: 'lark', definition: 'start: begin_patch hunk+ end_patch' } }] as unknown as OpenAI.Responses.Tool[];
    const first = await openai.responses.stream({ model: 'gpt-via-claude', input: 'add a.txt', tools }).finalResponse();
    expect(first.output).toEqual([expect.objectContaining({ type: 'custom_tool_call', call_id: 'toolu_p', name: 'apply_patch', input: patch })]);
    expect(lastBody(messagesUpstream).tools[0]).toMatchObject({ name: 'apply_patch', input_schema: { properties: { input: { type: 'string' } }, required: ['input'] } });
    expect(lastBody(messagesUpstream).tools[0].description).toContain('lark grammar:\nstart: begin_patch');

    messagesUpstream.reply(sendSse(fixture('anthropic/text-stream.sse')));
    await openai.responses.create({ model: 'gpt-via-claude', tools, input: [{ role: 'user', content: 'add a.txt' }, ...first.output, { type: 'custom_tool_call_output', call_id: 'toolu_p', output: 'Done!' }] as unknown as OpenAI.Responses.ResponseInputItem[] });
    const messages = lastBody(messagesUpstream).messages;
    expect(messages[1].content).toEqual([{ type: 'tool_use', id: 'toolu_p', name: 'apply_patch', input: { input: patch } }]);
    expect(messages[2].content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_p', content: [{ type: 'text', text: 'Done!' }] }]);
  });

  test("Codex's lite shape (0.171 default models): tools in additional_tools namespaces, and calls come back in their namespace", async () => {
    const toolUse = (name: string, input: unknown) =>
      `event: message_start\ndata: {"type":"message_start","message":{"id":"m1","usage":{"input_tokens":9,"output_tokens":1}}}\n\nevent: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_x","name":"${name}","input":{}}}\n\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":${JSON.stringify(JSON.stringify(input))}}}\n\nevent: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\nevent: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":20}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n`;
    const script = 'const r = await tools.exec_command({cmd: "echo hi"});\ntext(r.output);';
    const additionalTools = {
      type: 'additional_tools',
      role: 'developer',
      tools: [
        { type: 'namespace', name: 'functions', description: '', tools: [{ type: 'custom', name: 'exec', description: 'Run JavaScript', format: { type: 'grammar', syntax: 'lark', definition: 'start: source' } }] },
        { type: 'namespace', name: 'clock', tools: [{ type: 'function', name: 'sleep', strict: false, parameters: { type: 'object', properties: { duration_ms: { type: 'number' } }, required: ['duration_ms'] } }] },
      ],
    };
    const input = [additionalTools, { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'echo hi' }] }];
    const request = { model: 'gpt-via-claude', reasoning: { effort: 'low', context: 'all_turns' }, tool_choice: 'auto', parallel_tool_calls: false, input } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming;
    const streamed = request as unknown as Parameters<typeof openai.responses.stream>[0];

    messagesUpstream.reply(sendSse(toolUse('functions__exec', { input: script })));
    const custom = await openai.responses.stream(streamed).finalResponse();
    // Codex runs `exec` with or without its namespace, and refuses "functions__exec" (seen with 0.171.0).
    expect(custom.output).toEqual([expect.objectContaining({ type: 'custom_tool_call', call_id: 'toolu_x', name: 'exec', namespace: 'functions', input: script })]);
    expect(lastBody(messagesUpstream).tools.map((tool: { name: string }) => tool.name)).toEqual(['functions__exec', 'clock__sleep']);

    messagesUpstream.reply(sendSse(toolUse('clock__sleep', { duration_ms: 5 })));
    const plain = await openai.responses.create({ ...request, stream: false });
    expect(plain.output).toEqual([expect.objectContaining({ type: 'function_call', call_id: 'toolu_x', name: 'sleep', namespace: 'clock', arguments: '{"duration_ms":5}' })]);

    // The next turn sends the call back in its namespace; the upstream sees the name it called.
    messagesUpstream.reply(sendSse(fixture('anthropic/text-stream.sse')));
    const output = [{ type: 'input_text', text: 'Script completed' }, { type: 'input_text', text: 'hi\n' }];
    await openai.responses.create({ ...request, stream: false, input: [...input, ...custom.output, { type: 'custom_tool_call_output', call_id: 'toolu_x', output }] as unknown as OpenAI.Responses.ResponseInputItem[] });
    const messages = lastBody(messagesUpstream).messages;
    expect(messages[1].content).toEqual([{ type: 'tool_use', id: 'toolu_x', name: 'functions__exec', input: { input: script } }]);
    expect(messages[2].content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_x', content: [{ type: 'text', text: 'Script completed' }, { type: 'text', text: 'hi\n' }] }]);
  });

  test('structured output (Codex title requests) maps to output_config.format', async () => {
    messagesUpstream.reply(sendSse(fixture('anthropic/text-stream.sse')));
    const schema = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'], additionalProperties: false };
    await openai.responses.create({ model: 'gpt-via-claude', input: 'title?', text: { format: { type: 'json_schema', name: 'codex_output_schema', strict: true, schema } } });
    expect(lastBody(messagesUpstream).output_config).toEqual({ format: { type: 'json_schema', schema } });
  });
});

describe('Responses client via a Chat Completions upstream', () => {
  test('text and parallel function calls', async () => {
    chatUpstream.reply(sendSse(fixture('chat/parallel-tools-stream.sse')));
    const response = await openai.responses.stream({ model: 'gpt-via-vllm', input: 'go', tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: false }] }).finalResponse();
    expect(response.output.map((item) => item.type)).toEqual(['message', 'function_call', 'function_call']);
    expect(response.output_text).toBe('Checking.');
    chatUpstream.reply(sendSse(fixture('chat/text-stream.sse')));
    const plain = await openai.responses.create({ model: 'gpt-via-vllm', input: 'hi', instructions: 'Be nice.' });
    expect(plain.output_text).toBe('Hello wörld ✓');
    expect(plain.usage).toMatchObject({ input_tokens: 2048, output_tokens: 40, input_tokens_details: { cached_tokens: 1024 } });
    expect(lastBody(chatUpstream).messages).toEqual([{ role: 'system', content: 'Be nice.' }, { role: 'user', content: 'hi' }]);
  });
});

describe('errors across formats', () => {
  test('upstream overload (529) reaches a Responses client as 503 server_is_overloaded', async () => {
    messagesUpstream.reply(sendJson(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
    await expect(openai.responses.create({ model: 'gpt-via-claude', input: 'hi' })).rejects.toMatchObject({ status: 503, code: 'server_is_overloaded' });
  });

  test('an OpenAI-format upstream overloaded (503 server_error) reaches a Messages client as 529 overloaded_error, not as 500', async () => {
    for (const [upstream, model] of [[responsesUpstream, 'claude-via-gpt'], [chatUpstream, 'claude-via-vllm']] as const) {
      upstream.reply(sendJson(503, { error: { message: 'The server is overloaded or not ready yet.', type: 'server_error', param: null, code: null } }));
      await expect(anthropic.messages.create({ model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 529, error: { error: { type: 'overloaded_error' } } });
    }
    responsesUpstream.reply(sendJson(500, { error: { message: 'boom', type: 'server_error', param: null, code: null } }));
    await expect(anthropic.messages.create({ model: 'claude-via-gpt', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 500, error: { error: { type: 'api_error' } } });
  });

  test('an overload inside an Anthropic stream reaches a Responses client as response.failed server_error (Codex reconnects; it gives up at server_is_overloaded)', async () => {
    messagesUpstream.reply(sendSse('event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-sonnet-5","usage":{"input_tokens":1,"output_tokens":1}}}\n\nevent: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'));
    const response = await fetch(`${gateway.url}/second/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${openai.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-via-claude', input: 'hi', stream: true }) });
    const text = await response.text();
    expect(text).toContain('"type":"response.failed"');
    expect(text).toContain('"error":{"code":"server_error","message":"Overloaded"}');
  });

  test('context overflow reaches a Messages client in the form Claude Code recognises', async () => {
    responsesUpstream.reply(sendJson(400, { error: { message: 'Your input exceeds the context window of this model.', type: 'invalid_request_error', param: 'input', code: 'context_length_exceeded' } }));
    await expect(anthropic.messages.create({ model: 'claude-via-gpt', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({
      status: 400,
      error: { error: { type: 'invalid_request_error', message: 'prompt is too long: Your input exceeds the context window of this model.' } },
    });
  });

  test('a rate limit keeps its retry-after across the translation', async () => {
    chatUpstream.reply(sendJson(429, { error: { message: 'Slow down', type: 'rate_limit_error', code: 'rate_limit_exceeded' } }, { 'retry-after': '3' }));
    const response = await fetch(`${gateway.url}/first/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': (anthropic.apiKey as string) ?? '', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-via-vllm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', message: 'Slow down' } });
  });

  test('a mid-stream upstream failure ends a translated stream with the client format error', async () => {
    const events = sseEvents(fixture('anthropic/thinking-tool-stream.sse'));
    messagesUpstream.reply(sendSse(events.slice(0, 4), { end: 'destroy', gapMs: 20 }));
    const seen: string[] = [];
    for await (const event of await openai.responses.create({ model: 'gpt-via-claude', input: 'hi', stream: true })) seen.push(event.type);
    expect(seen.at(-1)).toBe('response.failed');
  });
});

describe('switching routes mid-conversation', () => {
  test('reasoning another provider issued is dropped, never sent where it causes a 400; thinking is turned off for that turn', async () => {
    // First turn on an OpenAI route: the Messages client gets a packed signature.
    responsesUpstream.reply(sendSse(sseEvents(fixture('openai/reasoning-tool-stream.sse'))));
    const first = await anthropic.messages.create({ model: 'claude-via-gpt', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2048 }, tools: [weather], messages: [{ role: 'user', content: 'Weather?' }] });
    expect((first.content[0] as Anthropic.ThinkingBlock).signature).toMatch(/^gw1\./);
    // Next turn on the Anthropic (passthrough) route: the request passes through without the foreign block.
    messagesUpstream.reply(sendJson(200, JSON.parse(fixture('anthropic/text.json'))));
    const second = await anthropic.messages.create({
      model: 'gpt-via-claude',
      max_tokens: 4000,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      tools: [weather],
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_fixture01', content: 'Sunny' }] },
      ],
    });
    expect(second.content[0]).toMatchObject({ type: 'text' });
    const sent = lastBody(messagesUpstream);
    expect(JSON.stringify(sent)).not.toContain('gw1.');
    expect(sent.messages[1].content).toEqual([{ type: 'tool_use', id: 'call_fixture01', name: 'get_weather', input: { city: 'Paris' } }]);
    expect(sent.thinking).toBeUndefined();
    // Everything else as the client sent it (newer Claude models refuse a conversation edited before a thinking block).
    expect(sent.tools).toEqual([weather]);
    expect(sent.messages[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_fixture01', content: 'Sunny' }] });
  });

  test('a content block that is not an object, in a conversation that mentions "gw1.", is the upstream\'s to refuse (never a gateway 500)', async () => {
    const refusal = { type: 'error', error: { type: 'invalid_request_error', message: 'messages.1.content.0: Input should be a valid dictionary' } };
    messagesUpstream.reply(sendJson(400, refusal));
    const body = JSON.stringify({ model: 'gpt-via-claude', max_tokens: 50, messages: [{ role: 'user', content: 'what is "gw1.x"?' }, { role: 'assistant', content: [null] }, { role: 'user', content: 'well?' }] });
    const response = await fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', headers: { 'x-api-key': anthropic.apiKey as string, 'content-type': 'application/json' }, body });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(refusal);
    // The client's bytes, but for the model name the route gives.
    expect(messagesUpstream.requests.at(-1)!.body).toBe(body.replace('"gpt-via-claude"', '"claude-sonnet-5"'));
  });
});
