import { errorFromMessages } from '../errors.ts';
import type { IrEvent } from '../ir.ts';
import { stopFromMessages } from '../stop-reasons.ts';
import { usageFromMessages } from '../usage-mapping.ts';
import { parseData, type StreamDecoder, type UpstreamEvent } from './decoder.ts';

/**
 * Anthropic Messages stream -> IR. Server-tool blocks (web search results...) have no
 * counterpart and are skipped whole.
 * @see docs/wire-formats.md §1.4, §4.9.1
 * @see https://docs.claude.com/en/api/messages-streaming
 */
export class MessagesStreamDecoder implements StreamDecoder {
  #skipping = false;
  #kind: 'text' | 'thinking' | 'tool_use' | undefined;
  #signature = '';
  #redacted: string | undefined;

  decode(event: UpstreamEvent): IrEvent[] {
    const data = parseData(event.data);
    switch (event.type ?? data.type) {
      case 'message_start': {
        const message = (data.message ?? {}) as Record<string, unknown>;
        return [
          { type: 'start', id: String(message.id ?? ''), model: String(message.model ?? '') },
          { type: 'usage', usage: usageFromMessages(message.usage) },
        ];
      }
      case 'content_block_start':
        return this.#start((data.content_block ?? {}) as Record<string, unknown>);
      case 'content_block_delta':
        return this.#delta((data.delta ?? {}) as Record<string, unknown>);
      case 'content_block_stop':
        return this.#stop();
      case 'message_delta': {
        const delta = (data.delta ?? {}) as Record<string, unknown>;
        const events: IrEvent[] = [{ type: 'usage', usage: usageFromMessages(data.usage) }];
        if (delta.stop_reason) {
          const finish: IrEvent = { type: 'finish', reason: stopFromMessages(delta.stop_reason) };
          if (typeof delta.stop_sequence === 'string') finish.stopSequence = delta.stop_sequence;
          events.push(finish);
        }
        return events;
      }
      case 'error':
        return [{ type: 'error', error: errorFromMessages(undefined, data) }];
      default:
        return [];
    }
  }

  #start(block: Record<string, unknown>): IrEvent[] {
    this.#skipping = false;
    this.#signature = '';
    this.#redacted = undefined;
    switch (block.type) {
      case 'text':
        this.#kind = 'text';
        return [{ type: 'block_start', block: { kind: 'text' } }, ...(block.text ? [{ type: 'text_delta' as const, text: String(block.text) }] : [])];
      case 'thinking':
        this.#kind = 'thinking';
        return [{ type: 'block_start', block: { kind: 'reasoning' } }];
      case 'redacted_thinking':
        this.#kind = 'thinking';
        this.#redacted = String(block.data ?? '');
        return [{ type: 'block_start', block: { kind: 'reasoning' } }];
      case 'tool_use':
        this.#kind = 'tool_use';
        return [{ type: 'block_start', block: { kind: 'tool_call', id: String(block.id), name: String(block.name) } }];
      default:
        this.#skipping = true;
        return [];
    }
  }

  #delta(delta: Record<string, unknown>): IrEvent[] {
    if (this.#skipping) return [];
    switch (delta.type) {
      case 'text_delta':
        return [{ type: 'text_delta', text: String(delta.text ?? '') }];
      case 'thinking_delta':
        return [{ type: 'reasoning_delta', text: String(delta.thinking ?? '') }];
      case 'signature_delta':
        this.#signature += String(delta.signature ?? '');
        return [];
      case 'input_json_delta':
        return [{ type: 'tool_input_delta', json: String(delta.partial_json ?? '') }];
      default:
        return [];
    }
  }

  #stop(): IrEvent[] {
    if (this.#skipping) {
      this.#skipping = false;
      return [];
    }
    const kind = this.#kind;
    this.#kind = undefined;
    if (kind !== 'thinking') return [{ type: 'block_stop' }];
    const carrier = this.#redacted !== undefined ? { provider: 'anthropic' as const, redactedData: this.#redacted } : { provider: 'anthropic' as const, signature: this.#signature };
    return [{ type: 'block_stop', carrier }];
  }
}
