import { randomBytes } from 'node:crypto';
import { errorToResponses, failedCodeForResponses } from '../errors.ts';
import type { EncoderContext, IrError, IrEvent, IrStopReason, IrTool, IrUsage, ReasoningCarrier } from '../ir.ts';
import { packCarrier } from '../reasoning-carry.ts';
import { stopToResponses } from '../stop-reasons.ts';
import { EMPTY_USAGE, usageToResponses } from '../usage-mapping.ts';
import { sse, type StreamEncoder } from './encoder.ts';

type Json = Record<string, unknown>;
const newId = (prefix: string) => `${prefix}_gw${randomBytes(12).toString('hex')}`;

/** The item being streamed, with what its `.done` events need. */
type OpenItem =
  | { kind: 'message'; item: Json; text: string; refusal: boolean }
  | { kind: 'reasoning'; item: Json; parts: string[] }
  | { kind: 'call'; item: Json; json: string; custom: boolean };

/**
 * IR -> OpenAI Responses stream: `sequence_number` from 0 without gaps, dense `output_index`,
 * unique item ids, `response.output_item.done` for every item (Codex takes items only from
 * those), and a terminal `response.completed` / `.incomplete` with the full `output` and `usage`,
 * or `response.failed`. Anthropic thinking rides in `encrypted_content`; freeform and namespaced
 * tools get their calls back in their own shape.
 * @see docs/wire-formats.md §2.4, §4.9.5
 * @see https://platform.openai.com/docs/api-reference/responses-streaming
 */
export class ResponsesStreamEncoder implements StreamEncoder {
  finished = false;
  usage: IrUsage = { ...EMPTY_USAGE };
  error: IrError | undefined;
  readonly #context: EncoderContext;
  readonly #tools: Map<string, IrTool>;
  readonly #response: Json;
  readonly #output: Json[] = [];
  #sequence = 0;
  #started = false;
  #open: OpenItem | undefined;
  #stop: IrStopReason = 'end_turn';

  constructor(context: EncoderContext) {
    this.#context = context;
    this.#tools = new Map(context.tools.map((tool) => [tool.name, tool]));
    const request = context.request;
    this.#response = {
      id: newId('resp'),
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status: 'in_progress',
      error: null,
      incomplete_details: null,
      instructions: null,
      max_output_tokens: request.maxOutputTokens ?? null,
      model: context.model,
      output: [],
      parallel_tool_calls: request.parallelToolCalls ?? true,
      previous_response_id: null,
      reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
      store: false,
      temperature: request.temperature ?? null,
      text: { format: request.responseFormat ? { type: 'json_schema', name: request.responseFormat.name, schema: request.responseFormat.schema, strict: request.responseFormat.strict ?? null } : { type: 'text' } },
      tool_choice: 'auto',
      tools: [],
      top_p: request.topP ?? null,
      usage: null,
      metadata: {},
    };
  }

  encode(event: IrEvent): string {
    if (this.finished) return '';
    switch (event.type) {
      case 'start':
        return this.#start();
      case 'usage':
        Object.assign(this.usage, event.usage);
        return '';
      case 'block_start':
        return this.#start() + this.#closeItem(undefined) + this.#openItem(event.block);
      case 'text_delta':
        return this.#text(event.text);
      case 'reasoning_delta':
        return this.#reasoning(event.text, event.newPart === true);
      case 'tool_input_delta':
        return this.#arguments(event.json);
      case 'block_stop':
        return this.#closeItem(event.carrier);
      case 'finish':
        this.#stop = event.reason;
        return this.#finish();
      case 'error':
        return this.fail(event.error);
    }
  }

  fail(error: IrError): string {
    if (this.finished) return '';
    const out = this.#start();
    this.finished = true;
    this.error = error;
    const response = { ...this.#response, status: 'failed', error: { code: failedCodeForResponses(error), message: errorToResponses(error).message }, output: this.#output };
    return out + this.#event('response.failed', { response });
  }

  keepalive(): string {
    // Codex resets its idle timer only on parsed events; current clients ignore this type.
    return this.#event('keepalive', {});
  }

  result(): Json {
    const { status, incompleteReason } = stopToResponses(this.#stop);
    return { ...this.#response, status, incomplete_details: incompleteReason ? { reason: incompleteReason } : null, output: this.#output, usage: usageToResponses(this.usage) };
  }

  #event(type: string, data: Json): string {
    return sse(type, { type, sequence_number: this.#sequence++, ...data });
  }

  #start(): string {
    if (this.#started) return '';
    this.#started = true;
    return this.#event('response.created', { response: this.#response }) + this.#event('response.in_progress', { response: this.#response });
  }

  #openItem(block: Extract<IrEvent, { type: 'block_start' }>['block']): string {
    const output_index = this.#output.length;
    if (block.kind === 'reasoning') {
      const item = { id: newId('rs'), type: 'reasoning', summary: [] as Json[], encrypted_content: null as string | null };
      this.#open = { kind: 'reasoning', item, parts: [] };
      return this.#event('response.output_item.added', { output_index, item: { ...item, summary: [] } });
    }
    if (block.kind === 'tool_call') {
      const tool = this.#tools.get(block.name);
      const custom = tool?.kind === 'custom';
      const namespace = tool?.namespace;
      const item: Json = custom
        ? { id: newId('ctc'), type: 'custom_tool_call', status: 'in_progress', call_id: block.id, name: namespace?.toolName ?? block.name, ...(namespace ? { namespace: namespace.name } : {}), input: '' }
        : { id: newId('fc'), type: 'function_call', status: 'in_progress', call_id: block.id, name: namespace?.toolName ?? block.name, ...(namespace ? { namespace: namespace.name } : {}), arguments: '' };
      this.#open = { kind: 'call', item, json: '', custom };
      return this.#event('response.output_item.added', { output_index, item: { ...item } });
    }
    const refusal = block.kind === 'refusal';
    const item = { id: newId('msg'), type: 'message', status: 'in_progress', role: 'assistant', content: [] as Json[] };
    this.#open = { kind: 'message', item, text: '', refusal };
    const part = refusal ? { type: 'refusal', refusal: '' } : { type: 'output_text', text: '', annotations: [], logprobs: [] };
    return this.#event('response.output_item.added', { output_index, item: { ...item, content: [] } }) + this.#event('response.content_part.added', { item_id: item.id, output_index, content_index: 0, part });
  }

  #text(text: string): string {
    const open = this.#open;
    if (open?.kind !== 'message' || text === '') return '';
    open.text += text;
    const at = { item_id: open.item.id, output_index: this.#output.length, content_index: 0 };
    return open.refusal ? this.#event('response.refusal.delta', { ...at, delta: text }) : this.#event('response.output_text.delta', { ...at, delta: text, logprobs: [] });
  }

  #reasoning(text: string, newPart: boolean): string {
    const open = this.#open;
    if (open?.kind !== 'reasoning' || text === '') return '';
    const output_index = this.#output.length;
    let out = '';
    if (open.parts.length === 0 || newPart) {
      if (open.parts.length > 0) out += this.#closeSummaryPart(open);
      open.parts.push('');
      out += this.#event('response.reasoning_summary_part.added', { item_id: open.item.id, output_index, summary_index: open.parts.length - 1, part: { type: 'summary_text', text: '' } });
    }
    open.parts[open.parts.length - 1] += text;
    return out + this.#event('response.reasoning_summary_text.delta', { item_id: open.item.id, output_index, summary_index: open.parts.length - 1, delta: text });
  }

  #closeSummaryPart(open: Extract<OpenItem, { kind: 'reasoning' }>): string {
    const at = { item_id: open.item.id, output_index: this.#output.length, summary_index: open.parts.length - 1 };
    const text = open.parts.at(-1) ?? '';
    return this.#event('response.reasoning_summary_text.done', { ...at, text }) + this.#event('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text } });
  }

  #arguments(json: string): string {
    const open = this.#open;
    if (open?.kind !== 'call' || json === '') return '';
    open.json += json;
    // Freeform input is only known whole (it arrives as JSON `{"input": ...}`): sent at the end.
    if (open.custom) return '';
    return this.#event('response.function_call_arguments.delta', { item_id: open.item.id, output_index: this.#output.length, delta: json });
  }

  #closeItem(carrier: ReasoningCarrier | undefined): string {
    const open = this.#open;
    if (!open) return '';
    this.#open = undefined;
    const output_index = this.#output.length;
    const item_id = open.item.id;
    let out = '';
    let item: Json;
    if (open.kind === 'message') {
      const part = open.refusal ? { type: 'refusal', refusal: open.text } : { type: 'output_text', text: open.text, annotations: [], logprobs: [] };
      out += open.refusal ? this.#event('response.refusal.done', { item_id, output_index, content_index: 0, refusal: open.text }) : this.#event('response.output_text.done', { item_id, output_index, content_index: 0, text: open.text, logprobs: [] });
      out += this.#event('response.content_part.done', { item_id, output_index, content_index: 0, part });
      item = { ...open.item, status: 'completed', content: [part] };
    } else if (open.kind === 'reasoning') {
      if (open.parts.length > 0) out += this.#closeSummaryPart(open);
      const thinking = open.parts.join('\n\n');
      item = { ...open.item, summary: open.parts.map((text) => ({ type: 'summary_text', text })), encrypted_content: carrier ? packCarrier(carrier, thinking) : null };
    } else if (open.custom) {
      const input = customInput(open.json);
      out += this.#event('response.custom_tool_call_input.delta', { item_id, output_index, delta: input });
      out += this.#event('response.custom_tool_call_input.done', { item_id, output_index, input });
      item = { ...open.item, status: 'completed', input };
    } else {
      const args = open.json.trim() === '' ? '{}' : open.json;
      out += this.#event('response.function_call_arguments.done', { item_id, output_index, name: open.item.name, arguments: args });
      item = { ...open.item, status: 'completed', arguments: args };
    }
    this.#output.push(item);
    return out + this.#event('response.output_item.done', { output_index, item });
  }

  #finish(): string {
    const out = this.#start() + this.#closeItem(undefined);
    this.finished = true;
    const response = this.result();
    return out + this.#event(response.status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  }
}

function customInput(json: string): string {
  try {
    const value: unknown = JSON.parse(json);
    if (typeof value === 'object' && value !== null && typeof (value as Json).input === 'string') return (value as Json).input as string;
  } catch {
    // fall through: a model that ignored the schema still gets its text delivered
  }
  return json;
}
