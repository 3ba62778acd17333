/**
 * Provider-shaped answers for the benchmark's upstream stub: a JSON reply and an SSE event list
 * for each wire format the gateway can call (Anthropic Messages, OpenAI Responses, Chat
 * Completions). Shapes follow the real providers closely enough for the gateway's observers
 * (usage, terminal event) to do their normal work; sizes are typical of one text token per delta.
 */
export type UpstreamFormat = 'messages' | 'responses' | 'chat';

/** Text of one streamed delta: about one token, as providers send it. */
const DELTA_TEXT = 'Hello world ';

function sse(event: string | undefined, data: unknown): string {
  const json = JSON.stringify(data);
  return event === undefined ? `data: ${json}\n\n` : `event: ${event}\ndata: ${json}\n\n`;
}

export function jsonReply(format: UpstreamFormat, model: string): string {
  switch (format) {
    case 'messages':
      return JSON.stringify({
        id: 'msg_bench_0001',
        type: 'message',
        role: 'assistant',
        model,
        content: [{ type: 'text', text: 'Hello! This is the benchmark stub answering a short question with a short reply.' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 25, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 18 },
      });
    case 'responses':
      return JSON.stringify({
        id: 'resp_bench_0001',
        object: 'response',
        created_at: 1_700_000_000,
        status: 'completed',
        model,
        output: [
          {
            type: 'message',
            id: 'msg_bench_0001',
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: 'Hello! This is the benchmark stub answering a short question with a short reply.', annotations: [] }],
          },
        ],
        usage: { input_tokens: 25, input_tokens_details: { cached_tokens: 0 }, output_tokens: 18, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 43 },
      });
    case 'chat':
      return JSON.stringify({
        id: 'chatcmpl-bench0001',
        object: 'chat.completion',
        created: 1_700_000_000,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! This is the benchmark stub answering a short question with a short reply.' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 25, completion_tokens: 18, total_tokens: 43 },
      });
  }
}

/** The events of one streamed answer with `deltas` text deltas; the first is sent at once. */
export function streamEvents(format: UpstreamFormat, model: string, deltas: number): string[] {
  switch (format) {
    case 'messages':
      return messagesEvents(model, deltas);
    case 'responses':
      return responsesEvents(model, deltas);
    case 'chat':
      return chatEvents(model, deltas);
  }
}

function messagesEvents(model: string, deltas: number): string[] {
  const usage = { input_tokens: 25, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 };
  const events = [
    sse('message_start', { type: 'message_start', message: { id: 'msg_bench_0001', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage } }),
    sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    sse('ping', { type: 'ping' }),
  ];
  for (let i = 0; i < deltas; i++) events.push(sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: DELTA_TEXT } }));
  events.push(
    sse('content_block_stop', { type: 'content_block_stop', index: 0 }),
    sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: deltas } }),
    sse('message_stop', { type: 'message_stop' }),
  );
  return events;
}

function responsesEvents(model: string, deltas: number): string[] {
  let sequence = 0;
  const response = { id: 'resp_bench_0001', object: 'response', created_at: 1_700_000_000, status: 'in_progress', model, output: [], usage: null };
  const item = { type: 'message', id: 'msg_bench_0001', status: 'in_progress', role: 'assistant', content: [] };
  const text = DELTA_TEXT.repeat(deltas);
  const part = { item_id: 'msg_bench_0001', output_index: 0, content_index: 0 };
  const events = [
    sse('response.created', { type: 'response.created', sequence_number: sequence++, response }),
    sse('response.in_progress', { type: 'response.in_progress', sequence_number: sequence++, response }),
    sse('response.output_item.added', { type: 'response.output_item.added', sequence_number: sequence++, output_index: 0, item }),
    sse('response.content_part.added', { type: 'response.content_part.added', sequence_number: sequence++, ...part, part: { type: 'output_text', text: '', annotations: [] } }),
  ];
  for (let i = 0; i < deltas; i++) {
    events.push(sse('response.output_text.delta', { type: 'response.output_text.delta', sequence_number: sequence++, ...part, delta: DELTA_TEXT, logprobs: [] }));
  }
  const usage = { input_tokens: 25, input_tokens_details: { cached_tokens: 0 }, output_tokens: deltas, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 25 + deltas };
  const done = { ...item, status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
  events.push(
    sse('response.output_text.done', { type: 'response.output_text.done', sequence_number: sequence++, ...part, text, logprobs: [] }),
    sse('response.content_part.done', { type: 'response.content_part.done', sequence_number: sequence++, ...part, part: done.content[0] }),
    sse('response.output_item.done', { type: 'response.output_item.done', sequence_number: sequence++, output_index: 0, item: done }),
    sse('response.completed', { type: 'response.completed', sequence_number: sequence++, response: { ...response, status: 'completed', output: [done], usage } }),
  );
  return events;
}

function chatEvents(model: string, deltas: number): string[] {
  const chunk = (delta: unknown, finish: string | null, usage?: unknown) => ({
    id: 'chatcmpl-bench0001',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...(usage === undefined ? {} : { usage }),
  });
  const events = [sse(undefined, chunk({ role: 'assistant', content: '' }, null))];
  for (let i = 0; i < deltas; i++) events.push(sse(undefined, chunk({ content: DELTA_TEXT }, null)));
  events.push(sse(undefined, chunk({}, 'stop', { prompt_tokens: 25, completion_tokens: deltas, total_tokens: 25 + deltas })), 'data: [DONE]\n\n');
  return events;
}
