import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { logOf, startGateway, type Harness } from '../support/gateway-harness.ts';

let gateway: Harness;
let anthropic: Anthropic;
let openai: OpenAI;

beforeAll(async () => {
  gateway = await startGateway({
    config: {
      upstreams: { sim: { type: 'simulator' }, paced: { type: 'simulator', delayMs: 40 }, 'as-openai': { type: 'simulator', speaks: 'responses' }, 'as-anthropic': { type: 'simulator', speaks: 'messages' } },
      routes: [
        { model: 'translated-gpt-*', upstream: 'as-openai' },
        { model: 'translated-claude-*', upstream: 'as-anthropic' },
        { model: 'paced-*', upstream: 'paced' },
        { model: 'renamed', upstream: 'sim', upstreamModel: 'sim-internal' },
        { model: 'claude-sonnet-5', upstream: 'sim' },
        { model: 'gpt-5.5', upstream: 'sim' },
        { model: '*', upstream: 'sim' },
      ],
    },
  });
  const { key } = await gateway.issueKey();
  anthropic = new Anthropic({ baseURL: `${gateway.url}/first`, apiKey: key, maxRetries: 0 });
  openai = new OpenAI({ baseURL: `${gateway.url}/second/v1`, apiKey: key, maxRetries: 0 });
});

afterAll(() => gateway.close());

const weather = {
  name: 'get_weather',
  description: 'Get the weather',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1 } }, required: ['city', 'days'] },
};

describe('simulator through the Anthropic SDK', () => {
  test('text, streamed and not, with usage', async () => {
    const request = { model: 'claude-sonnet-5', max_tokens: 100, messages: [{ role: 'user' as const, content: 'Say hi' }] };
    const message = await anthropic.messages.create(request);
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from the gateway simulator. You said: Say hi' }]);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    const stream = anthropic.messages.stream(request);
    let text = '';
    stream.on('text', (delta) => (text += delta));
    const final = await stream.finalMessage();
    expect(text).toBe('Hello from the gateway simulator. You said: Say hi');
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.output_tokens).toBeGreaterThan(0);
  });

  test('a tool round trip with thinking: the tool is called with schema-valid input, then the result is acknowledged', async () => {
    const first = await anthropic.messages
      .stream({ model: 'claude-sonnet-5', max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 }, tools: [weather], messages: [{ role: 'user', content: 'Use get_weather for Paris' }] })
      .finalMessage();
    expect(first.stop_reason).toBe('tool_use');
    const [thinking, toolUse] = first.content;
    expect(thinking).toMatchObject({ type: 'thinking', signature: expect.stringMatching(/^sim_/) });
    expect(toolUse).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'simulated', days: 1 } });
    const second = await anthropic.messages.create({
      model: 'claude-sonnet-5',
      max_tokens: 2000,
      tools: [weather],
      messages: [
        { role: 'user', content: 'Use get_weather for Paris' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: (toolUse as { id: string }).id, content: 'Sunny, 21C' }] },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'The tool returned: Sunny, 21C' }]);
  });

  test('answers the user even when a mid-conversation system message comes last (as Claude Code sends it), and names the client model on a renamed route', async () => {
    const message = await anthropic.messages.create({ model: 'renamed', max_tokens: 50, messages: [{ role: 'user', content: 'Say hi' }, { role: 'system', content: 'Agents: claude' } as unknown as Anthropic.MessageParam] });
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from the gateway simulator. You said: Say hi' }]);
    expect(message.model).toBe('renamed');
    const streamed = await anthropic.messages.stream({ model: 'renamed', max_tokens: 50, messages: [{ role: 'user', content: 'Say hi' }] }).finalMessage();
    expect(streamed.model).toBe('renamed');
    const response = await openai.responses.stream({ model: 'renamed', input: [{ role: 'user', content: 'Say hi' }, { role: 'developer', content: 'Be brief.' }] }).finalResponse();
    expect(response.model).toBe('renamed');
    expect(response.output_text).toBe('Hello from the gateway simulator. You said: Say hi');
  });

  test('paced streams really stream: events arrive spread over time', async () => {
    const arrivals: number[] = [];
    const stream = anthropic.messages.stream({ model: 'paced-claude', max_tokens: 50, messages: [{ role: 'user', content: 'one two three four' }] });
    stream.on('streamEvent', () => arrivals.push(Date.now()));
    await stream.finalMessage();
    expect(arrivals.length).toBeGreaterThan(8);
    expect((arrivals.at(-1) as number) - (arrivals[0] as number)).toBeGreaterThan(40 * (arrivals.length - 2));
  });

  test('count_tokens gives an estimate that grows with the prompt', async () => {
    const small = await anthropic.messages.countTokens({ model: 'claude-sonnet-5', messages: [{ role: 'user', content: 'hi' }] });
    const large = await anthropic.messages.countTokens({ model: 'claude-sonnet-5', messages: [{ role: 'user', content: 'hello world '.repeat(100) }], tools: [weather] });
    expect(small.input_tokens).toBeGreaterThan(0);
    expect(large.input_tokens).toBeGreaterThan(small.input_tokens + 300);
  });
});

describe('simulator through the OpenAI SDK', () => {
  test('text, streamed and not', async () => {
    const response = await openai.responses.create({ model: 'gpt-5.5', input: 'Say hi' });
    expect(response.output_text).toBe('Hello from the gateway simulator. You said: Say hi');
    const stream = openai.responses.stream({ model: 'gpt-5.5', input: [{ role: 'user', content: 'Say hi' }] });
    let text = '';
    stream.on('response.output_text.delta', (event) => (text += event.delta));
    const final = await stream.finalResponse();
    expect(text).toBe(final.output_text);
    expect(final.status).toBe('completed');
    expect(final.usage?.total_tokens).toBeGreaterThan(0);
  });

  test('function and custom tool calls, reasoning with encrypted content, then the tool output', async () => {
    const tools: OpenAI.Responses.Tool[] = [
      { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'], additionalProperties: false }, strict: false },
      { type: 'custom', name: 'apply_patch', description: 'Apply a patch' },
    ];
    const first = await openai.responses
      .stream({ model: 'gpt-5.5', input: 'run exec_command please', tools, reasoning: { summary: 'auto' }, include: ['reasoning.encrypted_content'] })
      .finalResponse();
    expect(first.output.map((item) => item.type)).toEqual(['reasoning', 'function_call']);
    expect(first.output[0]).toMatchObject({ encrypted_content: expect.any(String), summary: [{ type: 'summary_text' }] });
    const call = first.output[1] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(JSON.parse(call.arguments)).toEqual({ cmd: 'simulated' });

    const patch = await openai.responses.stream({ model: 'gpt-5.5', input: 'use apply_patch', tools }).finalResponse();
    expect(patch.output[0]).toMatchObject({ type: 'custom_tool_call', name: 'apply_patch', input: 'simulated input' });

    const second = await openai.responses.create({
      model: 'gpt-5.5',
      tools,
      input: [...first.output, { type: 'function_call_output', call_id: call.call_id, output: 'hello-from-tool' }] as OpenAI.Responses.ResponseInputItem[],
    });
    expect(second.output_text).toBe('The tool returned: hello-from-tool');
  });

  test('structured output follows the JSON schema (as in Codex title requests)', async () => {
    const response = await openai.responses.create({
      model: 'gpt-5.5',
      input: 'Generate a title',
      text: { format: { type: 'json_schema', name: 'codex_output_schema', strict: true, schema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'], additionalProperties: false } } },
    });
    expect(JSON.parse(response.output_text)).toEqual({ title: 'simulated' });
  });

  test('model lists in both shapes', async () => {
    const models = await openai.models.list();
    expect(models.data.map((model) => model.id)).toEqual(['renamed', 'claude-sonnet-5', 'gpt-5.5']);
    const claude = await anthropic.models.list();
    expect(claude.data.map((model) => model.id)).toEqual(['renamed', 'claude-sonnet-5', 'gpt-5.5']);
    expect(claude.data[1]).toMatchObject({ type: 'model', display_name: 'claude-sonnet-5' });
  });
});

describe("Codex's default models (0.171: tools in additional_tools namespaces, code mode)", () => {
  const liteTools = {
    type: 'additional_tools',
    role: 'developer',
    tools: [
      { type: 'namespace', name: 'functions', tools: [{ type: 'custom', name: 'exec', description: 'Run JavaScript\n### `exec_command`\ndeclare const tools: { exec_command(args: {cmd: string}): Promise<unknown>; };', format: { type: 'grammar', syntax: 'lark', definition: 'start: SOURCE' } }] },
      { type: 'namespace', name: 'clock', tools: [{ type: 'function', name: 'sleep', strict: false, parameters: { type: 'object', properties: { duration_ms: { type: 'number' } }, required: ['duration_ms'] } }] },
    ],
  };
  const lite = (model: string, text: string) => ({ model, reasoning: { effort: 'low', context: 'all_turns' }, input: [liteTools, { type: 'message', role: 'user', content: [{ type: 'input_text', text }] }] }) as unknown as Parameters<typeof openai.responses.stream>[0];

  test.each(['gpt-6.2-sol', 'translated-claude-lite'])('on %s: a nested tool is called through exec, in its namespace, and a namespaced function in its own', async (model) => {
    const viaExec = await openai.responses.stream(lite(model, 'use exec_command with {"cmd": "echo hello-from-tool"}')).finalResponse();
    expect(viaExec.output.at(-1)).toMatchObject({ type: 'custom_tool_call', name: 'exec', namespace: 'functions', input: expect.stringContaining('await tools.exec_command({"cmd":"echo hello-from-tool"})') });
    const sleep = await openai.responses.stream(lite(model, 'use clock.sleep with {"duration_ms": 5}')).finalResponse();
    expect(sleep.output.at(-1)).toMatchObject({ type: 'function_call', name: 'sleep', namespace: 'clock', arguments: '{"duration_ms":5}' });
    expect(sleep.output[0]).toMatchObject({ type: 'reasoning' });
  });
});

describe('a simulator told to speak one format: clients of the other go through the translator', () => {
  test('Claude Code\'s format on a simulator speaking Responses: a translated tool turn', async () => {
    const stream = anthropic.messages.stream({ model: 'translated-gpt-5', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 1024 }, tools: [weather], messages: [{ role: 'user', content: 'Use get_weather with {"city": "Paris", "days": 2}' }] });
    const message = await stream.finalMessage();
    const { response } = await stream.withResponse();
    expect(response.headers.get('x-gateway-upstream')).toBe('as-openai');
    expect(message.stop_reason).toBe('tool_use');
    // A thinking block carrying OpenAI's reasoning item (the gateway's carrier), not the Messages simulator's own signature.
    expect(message.content[0]).toMatchObject({ type: 'thinking', signature: expect.not.stringMatching(/^sim_/) });
    expect(message.content[1]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris', days: 2 } });
    const line = await logOf(gateway, response.headers.get('request-id'));
    expect(line).toMatchObject({ route: 'messages', upstream: 'as-openai', status: 200 });
  });

  test('Codex\'s format on a simulator speaking Messages: a translated text turn', async () => {
    const response = await openai.responses.create({ model: 'translated-claude-5', input: 'Say hi' });
    expect(response.output_text).toBe('Hello from the gateway simulator. You said: Say hi');
    expect(response.id).toMatch(/^resp_gw/);
  });

  test('only the simulator takes "speaks"', async () => {
    const { parseRoutingConfig } = await import('../../lambda/config/routing.ts');
    expect(() => parseRoutingConfig({ upstreams: { a: { type: 'anthropic', speaks: 'responses' } }, routes: [{ model: '*', upstream: 'a' }] })).toThrow('upstreams.a.speaks: only the simulator takes "speaks"');
  });
});
