import type { IrRequest } from '../../../lambda/translate/ir.ts';
import { StreamTranslator, type ClientFormat, type UpstreamFormat } from '../../../lambda/translate/translator.ts';
import { randomChunks } from '../../support/chunking.ts';
import { validateMessagesStream, validateResponsesStream } from '../../support/stream-validators.ts';
import { fixture } from '../../support/upstream-stub.ts';

const request: IrRequest = { model: 'client-model', system: [], turns: [], tools: [], stopSequences: [], stream: true, dropped: [] };
const context = { model: 'client-model', tools: [], request };

function run(client: ClientFormat, upstream: UpstreamFormat, chunks: Uint8Array[]) {
  const translator = new StreamTranslator(client, upstream, context);
  let out = '';
  for (const chunk of chunks) out += translator.push(chunk);
  out += translator.end();
  return { out, translator };
}

/** Ids are random per translation; compare streams with ids masked. */
const masked = (text: string) => text.replace(/(msg|rs|fc|ctc|resp)_gw[0-9a-f]{24}/g, '$1_ID').replace(/"created_at":\d+/g, '"created_at":0');

const cases: [ClientFormat, UpstreamFormat, string][] = [
  ['messages', 'responses', 'openai/reasoning-tool-stream.sse'],
  ['messages', 'responses', 'openai/text-stream.sse'],
  ['messages', 'chat', 'chat/text-stream.sse'],
  ['messages', 'chat', 'chat/parallel-tools-stream.sse'],
  ['responses', 'messages', 'anthropic/thinking-tool-stream.sse'],
  ['responses', 'messages', 'anthropic/text-stream.sse'],
  ['responses', 'chat', 'chat/text-stream.sse'],
  ['responses', 'chat', 'chat/parallel-tools-stream.sse'],
];

describe.each(cases)('%s client via %s upstream (%s)', (client, upstream, name) => {
  const bytes = Buffer.from(fixture(name));

  test('the stream is valid for the client and identical at 100 random chunkings', () => {
    const whole = run(client, upstream, [bytes]);
    expect(whole.translator.finished).toBe(true);
    expect(whole.translator.error).toBeUndefined();
    (client === 'messages' ? validateMessagesStream : validateResponsesStream)(whole.out);
    for (let seed = 1; seed <= 100; seed++) {
      expect(masked(run(client, upstream, randomChunks(bytes, seed, 1 + (seed % 80))).out)).toBe(masked(whole.out));
    }
  });

  test('usage comes from the final upstream events with one meaning', () => {
    const { translator } = run(client, upstream, [bytes]);
    const expected = {
      'openai/reasoning-tool-stream.sse': { inputTokens: 1024, cacheReadTokens: 1024, outputTokens: 30 },
      'openai/text-stream.sse': { inputTokens: 1024, cacheReadTokens: 1024, outputTokens: 7 },
      'chat/text-stream.sse': { inputTokens: 1024, cacheReadTokens: 1024, outputTokens: 40, reasoningTokens: 12 },
      'chat/parallel-tools-stream.sse': { inputTokens: 1024, cacheReadTokens: 1024, outputTokens: 30 },
      'anthropic/thinking-tool-stream.sse': { inputTokens: 25, cacheReadTokens: 1024, cacheWriteTokens: 3, outputTokens: 42 },
      'anthropic/text-stream.sse': { inputTokens: 25, cacheReadTokens: 1024, cacheWriteTokens: 3, outputTokens: 7 },
    }[name];
    expect(translator.usage).toMatchObject(expected as object);
  });

  test('a stream cut before its end is reported as an error, not passed off as complete', () => {
    const cut = bytes.subarray(0, Math.floor(bytes.length * 0.6));
    const { out, translator } = run(client, upstream, [cut]);
    expect(translator.error).toEqual({ category: 'server', message: 'The upstream closed the stream before it was complete.' });
    expect(out).toMatch(client === 'messages' ? /event: error\n/ : /"type":"response.failed"/);
  });
});

describe('translated content', () => {
  test('Responses reasoning and function call reach a Messages client as signed thinking and tool_use', () => {
    const events = validateMessagesStream(run('messages', 'responses', [Buffer.from(fixture('openai/reasoning-tool-stream.sse'))]).out);
    const starts = events.filter((event) => event.type === 'content_block_start').map((event) => event.content_block);
    expect(starts).toEqual([{ type: 'thinking', thinking: '', signature: '' }, { type: 'tool_use', id: 'call_fixture01', name: 'get_weather', input: {} }]);
    const signature = events.find((event) => event.delta?.type === 'signature_delta')?.delta.signature as string;
    expect(signature).toMatch(/^gw1\./);
    expect(events.find((event) => event.type === 'message_delta')).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { input_tokens: 1024, cache_read_input_tokens: 1024, output_tokens: 30 } });
    const json = events.filter((event) => event.delta?.type === 'input_json_delta').map((event) => event.delta.partial_json).join('');
    expect(JSON.parse(json)).toEqual({ city: 'Paris' });
  });

  test('Chat parallel tool calls with interleaved fragments become two complete tool calls; finish waits for usage', () => {
    const { out, translator } = run('responses', 'chat', [Buffer.from(fixture('chat/parallel-tools-stream.sse'))]);
    const events = validateResponsesStream(out);
    const terminal = events.at(-1) as Record<string, any>;
    expect(terminal.type).toBe('response.completed');
    expect(terminal.response.output.map((item: any) => [item.type, item.call_id, item.arguments ?? item.content?.[0]?.text])).toEqual([
      ['message', undefined, 'Checking.'],
      ['function_call', 'call_fixA', '{"city":"Paris"}'],
      ['function_call', 'call_fixB', '{"tz":"UTC"}'],
    ]);
    expect(terminal.response.usage).toEqual({ input_tokens: 2048, input_tokens_details: { cached_tokens: 1024 }, output_tokens: 30, output_tokens_details: { reasoning_tokens: 12 }, total_tokens: 2078 });
    expect(translator.result().status).toBe('completed');
  });

  test('Anthropic thinking reaches a Responses client as reasoning whose encrypted_content carries the signed block', () => {
    const events = validateResponsesStream(run('responses', 'messages', [Buffer.from(fixture('anthropic/thinking-tool-stream.sse'))]).out);
    const reasoning = events.find((event) => event.type === 'response.output_item.done' && event.item.type === 'reasoning')?.item;
    expect(reasoning.summary).toEqual([{ type: 'summary_text', text: 'The user wants the weather.' }]);
    expect(reasoning.encrypted_content).toMatch(/^gw1\./);
    expect(events.some((event) => event.type === 'response.reasoning_summary_text.delta')).toBe(true);
  });

  test('an upstream error event becomes the client format error', () => {
    const overloaded = 'event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":1}}}\n\nevent: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    const events = validateResponsesStream(run('responses', 'messages', [Buffer.from(overloaded)]).out);
    // server_error, not server_is_overloaded: at the latter Codex gives the turn up instead of reconnecting.
    expect(events.at(-1)).toMatchObject({ type: 'response.failed', response: { status: 'failed', error: { code: 'server_error', message: 'Overloaded' } } });
    const failed = 'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"r"}}\n\nevent: response.failed\ndata: {"type":"response.failed","sequence_number":1,"response":{"status":"failed","error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}}}\n\n';
    const messages = validateMessagesStream(run('messages', 'responses', [Buffer.from(failed)]).out);
    expect(messages.at(-1)).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: Your input exceeds the context window of this model.' } });
  });
});
