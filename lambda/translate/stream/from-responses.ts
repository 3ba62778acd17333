import { errorFromOpenAi } from '../errors.ts';
import type { IrEvent } from '../ir.ts';
import { stopFromResponses } from '../stop-reasons.ts';
import { usageFromResponses } from '../usage-mapping.ts';
import { parseData, type StreamDecoder, type UpstreamEvent } from './decoder.ts';

type Json = Record<string, unknown>;

/**
 * OpenAI Responses stream -> IR. Each content part of a message item becomes one block; a
 * function call's arguments come from its deltas, or from `.done` when none were streamed.
 * @see docs/wire-formats.md §2.4, §4.9.2
 * @see https://platform.openai.com/docs/api-reference/responses-streaming
 */
export class ResponsesStreamDecoder implements StreamDecoder {
  #openPart = false;
  #openItem: 'reasoning' | 'tool' | 'custom' | undefined;
  #argumentsStreamed = false;
  #customInput = '';
  #newSummaryPart = false;
  #sawToolCalls = false;

  decode(event: UpstreamEvent): IrEvent[] {
    const data = parseData(event.data);
    const type = String(data.type ?? event.type);
    switch (type) {
      case 'response.created': {
        const response = (data.response ?? {}) as Json;
        return [{ type: 'start', id: String(response.id ?? ''), model: String(response.model ?? '') }];
      }
      case 'response.output_item.added':
        return this.#itemAdded((data.item ?? {}) as Json);
      case 'response.reasoning_summary_part.added':
        if (Number(data.summary_index) > 0) this.#newSummaryPart = true;
        return [];
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta': {
        const delta: IrEvent = { type: 'reasoning_delta', text: String(data.delta ?? '') };
        if (this.#newSummaryPart) delta.newPart = true;
        this.#newSummaryPart = false;
        return [delta];
      }
      case 'response.content_part.added': {
        const part = (data.part ?? {}) as Json;
        this.#openPart = true;
        return [{ type: 'block_start', block: { kind: part.type === 'refusal' ? 'refusal' : 'text' } }];
      }
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        return this.#openPart ? [{ type: 'text_delta', text: String(data.delta ?? '') }] : [];
      case 'response.content_part.done':
        return this.#closePart();
      case 'response.function_call_arguments.delta':
        this.#argumentsStreamed = true;
        return [{ type: 'tool_input_delta', json: String(data.delta ?? '') }];
      case 'response.custom_tool_call_input.delta':
        this.#customInput += String(data.delta ?? '');
        return [];
      case 'response.output_item.done':
        return this.#itemDone((data.item ?? {}) as Json);
      case 'response.completed':
      case 'response.incomplete': {
        const response = (data.response ?? {}) as Json;
        const incomplete = (response.incomplete_details ?? {}) as Json;
        return [
          { type: 'usage', usage: usageFromResponses(response.usage) },
          { type: 'finish', reason: stopFromResponses(response.status, incomplete.reason, this.#sawToolCalls) },
        ];
      }
      case 'response.failed':
        return [{ type: 'error', error: errorFromOpenAi(undefined, ((data.response ?? {}) as Json).error) }];
      case 'error':
        return [{ type: 'error', error: errorFromOpenAi(undefined, data.error ?? data) }];
      default:
        return [];
    }
  }

  #itemAdded(item: Json): IrEvent[] {
    if (item.type === 'reasoning') {
      this.#openItem = 'reasoning';
      return [{ type: 'block_start', block: { kind: 'reasoning' } }];
    }
    if (item.type === 'function_call' || item.type === 'custom_tool_call') {
      this.#openItem = item.type === 'function_call' ? 'tool' : 'custom';
      this.#argumentsStreamed = false;
      this.#customInput = '';
      this.#sawToolCalls = true;
      const name = typeof item.namespace === 'string' ? `${item.namespace}__${String(item.name)}` : String(item.name);
      return [{ type: 'block_start', block: { kind: 'tool_call', id: String(item.call_id), name } }];
    }
    return [];
  }

  #itemDone(item: Json): IrEvent[] {
    const open = this.#openItem;
    this.#openItem = undefined;
    if (item.type === 'reasoning' && open === 'reasoning') {
      return [{ type: 'block_stop', carrier: { provider: 'openai', id: String(item.id), encryptedContent: typeof item.encrypted_content === 'string' ? item.encrypted_content : null } }];
    }
    if (item.type === 'function_call' && open === 'tool') {
      const rest: IrEvent[] = this.#argumentsStreamed ? [] : [{ type: 'tool_input_delta', json: String(item.arguments ?? '') }];
      return [...rest, { type: 'block_stop' }];
    }
    if (item.type === 'custom_tool_call' && open === 'custom') {
      return [{ type: 'tool_input_delta', json: JSON.stringify({ input: this.#customInput || String(item.input ?? '') }) }, { type: 'block_stop' }];
    }
    return item.type === 'message' ? this.#closePart() : [];
  }

  #closePart(): IrEvent[] {
    if (!this.#openPart) return [];
    this.#openPart = false;
    return [{ type: 'block_stop' }];
  }
}
