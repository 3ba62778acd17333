import { errorFromOpenAi } from '../errors.ts';
import type { IrEvent, IrStopReason } from '../ir.ts';
import { stopFromChat } from '../stop-reasons.ts';
import { usageFromChat } from '../usage-mapping.ts';
import { parseData, type StreamDecoder, type UpstreamEvent } from './decoder.ts';

type Json = Record<string, unknown>;

/**
 * Chat Completions stream -> IR. Text and reasoning stream live; tool calls are collected per
 * `index` (servers may interleave their fragments) and emitted whole when the choice finishes.
 * `finish_reason` arrives before the usage chunk, so the finish is held until usage or `[DONE]`.
 * @see docs/wire-formats.md §3.2, §4.9.3
 * @see https://platform.openai.com/docs/api-reference/chat-streaming
 */
export class ChatStreamDecoder implements StreamDecoder {
  #started = false;
  #open: 'text' | 'reasoning' | 'refusal' | undefined;
  readonly #calls = new Map<number, { id: string; name: string; arguments: string }>();
  #finish: IrStopReason | undefined;
  #done = false;

  decode(event: UpstreamEvent): IrEvent[] {
    if (this.#done) return [];
    if (event.data.trim() === '[DONE]') return this.#end();
    const chunk = parseData(event.data);
    if (chunk.error !== undefined) {
      this.#done = true;
      return [{ type: 'error', error: errorFromOpenAi(undefined, chunk.error) }];
    }
    const events: IrEvent[] = [];
    if (!this.#started) {
      this.#started = true;
      events.push({ type: 'start', id: String(chunk.id ?? ''), model: String(chunk.model ?? '') });
    }
    const choice = (Array.isArray(chunk.choices) ? chunk.choices[0] : undefined) as Json | undefined;
    const delta = (choice?.delta ?? {}) as Json;
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === 'string' && reasoning) events.push(...this.#text('reasoning', reasoning));
    if (typeof delta.content === 'string' && delta.content) events.push(...this.#text('text', delta.content));
    if (typeof delta.refusal === 'string' && delta.refusal) events.push(...this.#text('refusal', delta.refusal));
    if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls as Json[]) this.#collect(call);
    if (choice?.finish_reason && this.#finish === undefined) {
      const sawToolCalls = this.#calls.size > 0;
      events.push(...this.#close(), ...this.#flushCalls());
      this.#finish = stopFromChat(choice.finish_reason, sawToolCalls);
    }
    if (chunk.usage && typeof chunk.usage === 'object') {
      events.push({ type: 'usage', usage: usageFromChat(chunk.usage) });
      if (this.#finish !== undefined) events.push(...this.#end());
    }
    return events;
  }

  #text(kind: 'text' | 'reasoning' | 'refusal', text: string): IrEvent[] {
    const events: IrEvent[] = [];
    if (this.#open !== kind) {
      events.push(...this.#close(), { type: 'block_start', block: { kind } });
      this.#open = kind;
    }
    events.push(kind === 'reasoning' ? { type: 'reasoning_delta', text } : { type: 'text_delta', text });
    return events;
  }

  #close(): IrEvent[] {
    if (this.#open === undefined) return [];
    this.#open = undefined;
    return [{ type: 'block_stop' }];
  }

  #collect(call: Json): void {
    const index = typeof call.index === 'number' ? call.index : this.#calls.size;
    const fn = (call.function ?? {}) as Json;
    const entry = this.#calls.get(index) ?? { id: '', name: '', arguments: '' };
    if (typeof call.id === 'string' && call.id) entry.id = call.id;
    if (typeof fn.name === 'string') entry.name += fn.name;
    if (typeof fn.arguments === 'string') entry.arguments += fn.arguments;
    this.#calls.set(index, entry);
  }

  #flushCalls(): IrEvent[] {
    const events: IrEvent[] = [];
    for (const [index, call] of [...this.#calls].sort(([a], [b]) => a - b)) {
      events.push(
        { type: 'block_start', block: { kind: 'tool_call', id: call.id || `call_${index}`, name: call.name } },
        { type: 'tool_input_delta', json: call.arguments },
        { type: 'block_stop' },
      );
    }
    this.#calls.clear();
    return events;
  }

  #end(): IrEvent[] {
    this.#done = true;
    if (this.#finish === undefined) return [];
    return [...this.#close(), { type: 'finish', reason: this.#finish }];
  }
}
