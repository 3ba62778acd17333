import { randomBytes } from 'node:crypto';
import { isRecord, type Json, type WireFormat, type WireRequest } from './wire.ts';

/**
 * Provider-shaped answers in each upstream format, streamed (SSE, as the providers frame it) or
 * as one JSON body, following docs/wire-formats.md §1.4 and §2.4 and OpenAI's Chat
 * Completions chunk format. An answer may carry thinking/reasoning, text and one tool call.
 */
export interface Answer {
  thinking: { text: string; signature: string } | undefined;
  text: string | undefined;
  toolCall: { id: string; name: string; input: string | Json } | undefined;
  usage: { input: number; output: number };
}

export interface Rendered {
  status: number;
  headers: Record<string, string>;
  /** Whole SSE frames (streaming), or undefined for a JSON body. */
  frames: string[] | undefined;
  json: string | undefined;
}

export const hex = (bytes = 12) => randomBytes(bytes).toString('hex');

const sse = (event: string, data: Json) => `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`;
const chatFrame = (data: Json | string) => `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };
const JSON_HEADERS = { 'content-type': 'application/json' };

export function render(format: WireFormat, request: WireRequest, answer: Answer): Rendered {
  const stream = request.stream;
  const frames = format === 'messages' ? messagesFrames(request, answer) : format === 'responses' ? responsesFrames(request, answer) : chatFrames(request, answer);
  if (stream) return { status: 200, headers: { ...SSE_HEADERS }, frames, json: undefined };
  const json = format === 'messages' ? messagesJson(request, answer) : format === 'responses' ? responsesJson(request, answer) : chatJson(request, answer);
  return { status: 200, headers: { ...JSON_HEADERS }, frames: undefined, json: JSON.stringify(json) };
}

/** The first frames of a text answer: what arrives before a mid-stream failure. */
export function partialFrames(format: WireFormat, request: WireRequest): string[] {
  const answer: Answer = { thinking: undefined, text: 'Partial answer that will never finish', toolCall: undefined, usage: { input: 25, output: 7 } };
  if (format === 'messages') return messagesFrames(request, answer).slice(0, 4);
  if (format === 'responses') return responsesFrames(request, answer).slice(0, 5);
  return chatFrames(request, answer).slice(0, 2);
}

/**
 * The first frames of a text answer, then the format's own in-stream failure: Anthropic's
 * `event: error` (overloaded_error, what the API sends when it overloads mid-answer), OpenAI
 * Responses' `response.failed`, a Chat Completions chunk carrying `error` (what OpenAI-compatible
 * servers send); the stream then ends.
 */
export function streamErrorFrames(format: WireFormat, request: WireRequest, message: string): string[] {
  const frames = partialFrames(format, request);
  if (format === 'messages') return [...frames, sse('error', { error: { type: 'overloaded_error', message } })];
  if (format === 'chat') return [...frames, chatFrame({ error: { message, type: 'server_error', code: null } })];
  const response = { ...responseObject(request, `resp_${hex()}`, 'failed', [], null), error: { code: 'server_error', message } };
  return [...frames, sse('response.failed', { sequence_number: frames.length, response })];
}

/** An error body in the format's own envelope. */
export function errorBody(format: WireFormat, status: number, message: string): Json {
  if (format === 'messages') {
    const type = { 400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error', 429: 'rate_limit_error', 529: 'overloaded_error' }[status] ?? 'api_error';
    return { type: 'error', error: { type, message }, request_id: `req_${hex()}` };
  }
  const type = { 400: 'invalid_request_error', 401: 'invalid_request_error', 429: 'rate_limit_exceeded' }[status] ?? 'server_error';
  const code = { 401: 'invalid_api_key', 429: 'rate_limit_exceeded' }[status] ?? null;
  return { error: { message, type, param: null, code } };
}

/** How a tool call's input is written for the tool the request offered under that name. */
function toolInput(request: WireRequest, name: string, input: string | Json): { custom: boolean; text: string; object: Json; namespace: Json } {
  const offered = request.tools.find((tool) => tool.name === name);
  const custom = offered?.kind === 'custom';
  // A namespaced tool is called in its namespace, as OpenAI does (Codex runs nothing else).
  const namespace = offered?.namespace ? { namespace: offered.namespace } : {};
  if (typeof input !== 'string') return { custom, text: JSON.stringify(input), object: input, namespace };
  // Free-form input (a patch). A custom tool takes it as is; a function tool (what a translator
  // makes of a custom tool) gets it in its single string field.
  return { custom, text: input, object: { [stringField(offered?.schema) ?? 'input']: input }, namespace };
}

function stringField(schema: unknown): string | undefined {
  if (!isRecord(schema) || !isRecord(schema.properties)) return undefined;
  const properties = schema.properties;
  const strings = Object.keys(properties).filter((key) => isRecord(properties[key]) && (properties[key] as Json).type === 'string');
  const required = Array.isArray(schema.required) ? strings.filter((key) => (schema.required as unknown[]).includes(key)) : [];
  return required[0] ?? strings[0];
}

// ---------------------------------------------------------------- Anthropic Messages

function messagesUsage(answer: Answer) {
  return { input_tokens: answer.usage.input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: answer.usage.output };
}

function messagesBlocks(request: WireRequest, answer: Answer): Json[] {
  const blocks: Json[] = [];
  if (answer.thinking) blocks.push({ type: 'thinking', thinking: answer.thinking.text, signature: answer.thinking.signature });
  if (answer.text !== undefined) blocks.push({ type: 'text', text: answer.text });
  if (answer.toolCall) {
    const { object } = toolInput(request, answer.toolCall.name, answer.toolCall.input);
    blocks.push({ type: 'tool_use', id: answer.toolCall.id, name: answer.toolCall.name, input: object });
  }
  return blocks;
}

function messagesFrames(request: WireRequest, answer: Answer): string[] {
  const id = `msg_${hex()}`;
  const frames = [sse('message_start', { message: { id, type: 'message', role: 'assistant', model: request.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...messagesUsage(answer), output_tokens: 1 } } })];
  messagesBlocks(request, answer).forEach((block, index) => {
    if (block.type === 'thinking') {
      frames.push(sse('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
      frames.push(sse('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: block.thinking } }));
      frames.push(sse('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } }));
    } else if (block.type === 'text') {
      const text = String(block.text);
      frames.push(sse('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      if (index === 0) frames.push(sse('ping', {}));
      for (const piece of halves(text)) frames.push(sse('content_block_delta', { index, delta: { type: 'text_delta', text: piece } }));
    } else {
      const json = JSON.stringify(block.input);
      frames.push(sse('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }));
      for (const piece of ['', ...halves(json)]) frames.push(sse('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } }));
    }
    frames.push(sse('content_block_stop', { index }));
  });
  frames.push(sse('message_delta', { delta: { stop_reason: answer.toolCall ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: answer.usage.output } }));
  frames.push(sse('message_stop', {}));
  return frames;
}

function messagesJson(request: WireRequest, answer: Answer): Json {
  return {
    id: `msg_${hex()}`,
    type: 'message',
    role: 'assistant',
    model: request.model,
    content: messagesBlocks(request, answer),
    stop_reason: answer.toolCall ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: messagesUsage(answer),
  };
}

// ---------------------------------------------------------------- OpenAI Responses

function responsesItems(request: WireRequest, answer: Answer): Json[] {
  const items: Json[] = [];
  if (answer.thinking) {
    items.push({ id: `rs_${hex()}`, type: 'reasoning', summary: [{ type: 'summary_text', text: answer.thinking.text }], encrypted_content: answer.thinking.signature });
  }
  if (answer.text !== undefined) {
    items.push({ id: `msg_${hex()}`, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], logprobs: [], text: answer.text }] });
  }
  if (answer.toolCall) {
    const { custom, text, object, namespace } = toolInput(request, answer.toolCall.name, answer.toolCall.input);
    items.push(
      custom
        ? { id: `ctc_${hex()}`, type: 'custom_tool_call', status: 'completed', call_id: answer.toolCall.id, name: answer.toolCall.name, ...namespace, input: text }
        : { id: `fc_${hex()}`, type: 'function_call', status: 'completed', call_id: answer.toolCall.id, name: answer.toolCall.name, ...namespace, arguments: JSON.stringify(object) },
    );
  }
  return items;
}

function responsesUsage(answer: Answer) {
  return {
    input_tokens: answer.usage.input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: answer.usage.output,
    output_tokens_details: { reasoning_tokens: answer.thinking ? 5 : 0 },
    total_tokens: answer.usage.input + answer.usage.output,
  };
}

function responseObject(request: WireRequest, id: string, status: string, output: Json[], usage: Json | null): Json {
  return {
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: request.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    store: false,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage,
    metadata: {},
  };
}

function responsesFrames(request: WireRequest, answer: Answer): string[] {
  const id = `resp_${hex()}`;
  const frames: string[] = [];
  const push = (type: string, data: Json) => frames.push(sse(type, { sequence_number: frames.length, ...data }));
  push('response.created', { response: responseObject(request, id, 'in_progress', [], null) });
  push('response.in_progress', { response: responseObject(request, id, 'in_progress', [], null) });
  const items = responsesItems(request, answer);
  items.forEach((item, output_index) => {
    const item_id = item.id;
    if (item.type === 'reasoning') {
      const text = answer.thinking?.text ?? '';
      push('response.output_item.added', { output_index, item: { ...item, summary: [], encrypted_content: null } });
      push('response.reasoning_summary_part.added', { item_id, output_index, summary_index: 0, part: { type: 'summary_text', text: '' } });
      push('response.reasoning_summary_text.delta', { item_id, output_index, summary_index: 0, delta: text });
      push('response.reasoning_summary_text.done', { item_id, output_index, summary_index: 0, text });
      push('response.reasoning_summary_part.done', { item_id, output_index, summary_index: 0, part: { type: 'summary_text', text } });
    } else if (item.type === 'message') {
      const text = answer.text ?? '';
      const part = { type: 'output_text', annotations: [], logprobs: [], text: '' };
      push('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      push('response.content_part.added', { item_id, output_index, content_index: 0, part });
      for (const delta of halves(text)) push('response.output_text.delta', { item_id, output_index, content_index: 0, delta, logprobs: [] });
      push('response.output_text.done', { item_id, output_index, content_index: 0, text, logprobs: [] });
      push('response.content_part.done', { item_id, output_index, content_index: 0, part: { ...part, text } });
    } else if (item.type === 'function_call') {
      const args = String(item.arguments);
      push('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      for (const delta of halves(args)) push('response.function_call_arguments.delta', { item_id, output_index, delta });
      push('response.function_call_arguments.done', { item_id, output_index, name: item.name, arguments: args });
    } else {
      push('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', input: '' } });
      for (const delta of halves(String(item.input))) push('response.custom_tool_call_input.delta', { item_id, output_index, delta });
      push('response.custom_tool_call_input.done', { item_id, output_index, input: item.input });
    }
    push('response.output_item.done', { output_index, item });
  });
  push('response.completed', { response: responseObject(request, id, 'completed', items, responsesUsage(answer)) });
  return frames;
}

function responsesJson(request: WireRequest, answer: Answer): Json {
  return responseObject(request, `resp_${hex()}`, 'completed', responsesItems(request, answer), responsesUsage(answer));
}

// ---------------------------------------------------------------- OpenAI Chat Completions

function chatUsage(answer: Answer) {
  return { prompt_tokens: answer.usage.input, completion_tokens: answer.usage.output, total_tokens: answer.usage.input + answer.usage.output, prompt_tokens_details: { cached_tokens: 0 } };
}

function chatToolCall(request: WireRequest, answer: Answer): Json | undefined {
  if (!answer.toolCall) return undefined;
  const { object } = toolInput(request, answer.toolCall.name, answer.toolCall.input);
  return { id: answer.toolCall.id, type: 'function', function: { name: answer.toolCall.name, arguments: JSON.stringify(object) } };
}

function chatFrames(request: WireRequest, answer: Answer): string[] {
  const id = `chatcmpl-${hex()}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Json, finish: string | null = null) => chatFrame({ id, object: 'chat.completion.chunk', created, model: request.model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const frames = [chunk({ role: 'assistant', content: '' })];
  if (answer.thinking) for (const piece of halves(answer.thinking.text)) frames.push(chunk({ reasoning_content: piece }));
  if (answer.text !== undefined) for (const piece of halves(answer.text)) frames.push(chunk({ content: piece }));
  const call = chatToolCall(request, answer);
  if (call) {
    const fn = call.function as { name: string; arguments: string };
    frames.push(chunk({ tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: fn.name, arguments: '' } }] }));
    for (const piece of halves(fn.arguments)) frames.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
  }
  frames.push(chunk({}, call ? 'tool_calls' : 'stop'));
  frames.push(chatFrame({ id, object: 'chat.completion.chunk', created, model: request.model, choices: [], usage: chatUsage(answer) }));
  frames.push(chatFrame('[DONE]'));
  return frames;
}

function chatJson(request: WireRequest, answer: Answer): Json {
  const call = chatToolCall(request, answer);
  const message: Json = { role: 'assistant', content: answer.text ?? null };
  if (answer.thinking) message.reasoning_content = answer.thinking.text;
  if (call) message.tool_calls = [call];
  return {
    id: `chatcmpl-${hex()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: request.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: call ? 'tool_calls' : 'stop' }],
    usage: chatUsage(answer),
  };
}

/** Two pieces (so every stream has more than one delta), or one when too short to split. */
function halves(text: string): string[] {
  if (text.length < 2) return [text];
  const half = Math.ceil(text.length / 2);
  return [text.slice(0, half), text.slice(half)];
}
