import { randomBytes } from 'node:crypto';
import { errorToMessages } from '../errors.ts';
import type { EncoderContext, IrError, IrEvent, IrStopReason, IrUsage, ReasoningCarrier } from '../ir.ts';
import { packCarrier } from '../reasoning-carry.ts';
import { stopToMessages } from '../stop-reasons.ts';
import { EMPTY_USAGE, usageToMessages } from '../usage-mapping.ts';
import { sse, type StreamEncoder } from './encoder.ts';

type Block = { type: 'text'; text: string } | { type: 'thinking'; thinking: string; signature: string } | { type: 'tool_use'; id: string; name: string; json: string };

/**
 * IR -> Anthropic Messages stream: `event:` lines always (the SDK dispatches on them), one
 * `message_start`, a `content_block_stop` for every block, then `message_delta` with the stop
 * reason and the full usage, then `message_stop`. Reasoning from another provider is carried
 * in the thinking block's signature.
 * @see docs/wire-formats.md §1.4, §4.9.4
 * @see https://docs.claude.com/en/api/messages-streaming
 */
export class MessagesStreamEncoder implements StreamEncoder {
  finished = false;
  usage: IrUsage = { ...EMPTY_USAGE };
  error: IrError | undefined;
  readonly #context: EncoderContext;
  readonly #id = `msg_gw${randomBytes(12).toString('hex')}`;
  readonly #blocks: Block[] = [];
  #started = false;
  #open: Block | undefined;
  #stop: IrStopReason = 'end_turn';
  #stopSequence: string | null = null;

  constructor(context: EncoderContext) {
    this.#context = context;
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
        return this.#start() + this.#openBlock(event.block);
      case 'text_delta':
        return this.#append('text', event.text);
      case 'reasoning_delta':
        return this.#append('thinking', event.newPart ? `\n\n${event.text}` : event.text);
      case 'tool_input_delta':
        return this.#append('tool_use', event.json);
      case 'block_stop':
        return this.#closeBlock(event.carrier);
      case 'finish':
        this.#stop = event.reason;
        this.#stopSequence = event.stopSequence ?? null;
        return this.#finish();
      case 'error':
        return this.fail(event.error);
    }
  }

  fail(error: IrError): string {
    if (this.finished) return '';
    this.finished = true;
    this.error = error;
    const { type, message } = errorToMessages(error);
    return sse('error', { type: 'error', error: { type, message } });
  }

  keepalive(): string {
    // A comment, not a `ping` event: comments keep intermediaries from timing out without
    // resetting Claude Code's own idle watchdog, which must still catch a dead upstream.
    return ': keepalive\n\n';
  }

  result(): Record<string, unknown> {
    const content = this.#blocks.map((block) => {
      if (block.type !== 'tool_use') return block;
      return { type: 'tool_use', id: block.id, name: block.name, input: parseInput(block.json) };
    });
    return { ...this.#envelope(), content, stop_reason: stopToMessages(this.#stop), stop_sequence: this.#stopSequence, usage: usageToMessages(this.usage) };
  }

  #envelope() {
    return { id: this.#id, type: 'message', role: 'assistant', model: this.#context.model };
  }

  #start(): string {
    if (this.#started) return '';
    this.#started = true;
    const message = { ...this.#envelope(), content: [], stop_reason: null, stop_sequence: null, usage: usageToMessages(this.usage) };
    return sse('message_start', { type: 'message_start', message });
  }

  #openBlock(block: Extract<IrEvent, { type: 'block_start' }>['block']): string {
    const close = this.#open ? this.#closeBlock(undefined) : '';
    let opened: Block;
    let start: Record<string, unknown>;
    if (block.kind === 'reasoning') {
      opened = { type: 'thinking', thinking: '', signature: '' };
      start = { type: 'thinking', thinking: '', signature: '' };
    } else if (block.kind === 'tool_call') {
      opened = { type: 'tool_use', id: block.id, name: block.name, json: '' };
      start = { type: 'tool_use', id: block.id, name: block.name, input: {} };
    } else {
      opened = { type: 'text', text: '' };
      start = { type: 'text', text: '' };
    }
    this.#open = opened;
    this.#blocks.push(opened);
    return close + sse('content_block_start', { type: 'content_block_start', index: this.#blocks.length - 1, content_block: start });
  }

  #append(type: Block['type'], text: string): string {
    const block = this.#open;
    if (!block || block.type !== type || text === '') return '';
    const index = this.#blocks.length - 1;
    if (block.type === 'text') {
      block.text += text;
      return sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
    }
    if (block.type === 'thinking') {
      block.thinking += text;
      return sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: text } });
    }
    block.json += text;
    return sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: text } });
  }

  #closeBlock(carrier: ReasoningCarrier | undefined): string {
    const block = this.#open;
    if (!block) return '';
    this.#open = undefined;
    const index = this.#blocks.length - 1;
    let out = '';
    if (block.type === 'thinking') {
      // Anthropic's own signature goes out as is; another provider's state is packed; Chat
      // upstreams have none, so the block goes out unsigned (and is dropped on replay).
      block.signature = carrier === undefined ? '' : carrier.provider === 'anthropic' && 'signature' in carrier ? carrier.signature : packCarrier(carrier, block.thinking);
      out += sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } });
    }
    return out + sse('content_block_stop', { type: 'content_block_stop', index });
  }

  #finish(): string {
    const out = this.#start() + this.#closeBlock(undefined);
    this.finished = true;
    const delta = { stop_reason: stopToMessages(this.#stop), stop_sequence: this.#stopSequence };
    return out + sse('message_delta', { type: 'message_delta', delta, usage: usageToMessages(this.usage) }) + sse('message_stop', { type: 'message_stop' });
  }
}

function parseInput(json: string): unknown {
  if (json.trim() === '') return {};
  try {
    return JSON.parse(json);
  } catch {
    return {};
  }
}
