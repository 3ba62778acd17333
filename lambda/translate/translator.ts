import { parseSseEvent, sseEventType, SseEventSplitter } from '../formats/sse/event-splitter.ts';
import { errorFromMessages, errorFromOpenAi, errorToMessages, errorToResponses } from './errors.ts';
import type { EncoderContext, IrError, IrRequest, IrUsage } from './ir.ts';
import { emitChatRequest } from './request/to-chat.ts';
import { emitMessagesRequest } from './request/to-messages.ts';
import { emitResponsesRequest } from './request/to-responses.ts';
import { parseMessagesRequest } from './request/from-messages.ts';
import { parseResponsesRequest } from './request/from-responses.ts';
import type { Json } from './request/shared.ts';
import type { StreamDecoder } from './stream/decoder.ts';
import type { StreamEncoder } from './stream/encoder.ts';
import { ChatStreamDecoder } from './stream/from-chat.ts';
import { MessagesStreamDecoder } from './stream/from-messages.ts';
import { ResponsesStreamDecoder } from './stream/from-responses.ts';
import { MessagesStreamEncoder } from './stream/to-messages.ts';
import { ResponsesStreamEncoder } from './stream/to-responses.ts';

export type ClientFormat = 'messages' | 'responses';
export type UpstreamFormat = 'messages' | 'responses' | 'chat';

export interface UpstreamTarget {
  model: string;
  /** Output-token ceiling configured for the upstream, if any. */
  maxOutputTokens?: number;
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
}

export interface TranslatedRequest {
  ir: IrRequest;
  /** The upstream request body; always streaming, whatever the client asked. */
  body: Json;
  /** Everything the translation could not carry, for the response header and the log. */
  dropped: string[];
}

/** Client request -> upstream request, through the IR. Throws a 400 GatewayError for requests no upstream could serve statelessly. */
export function translateRequest(client: ClientFormat, body: Json, upstream: UpstreamFormat, target: UpstreamTarget): TranslatedRequest {
  const ir = client === 'messages' ? parseMessagesRequest(body) : parseResponsesRequest(body);
  const emitted = upstream === 'messages' ? emitMessagesRequest(ir, target) : upstream === 'responses' ? emitResponsesRequest(ir, target) : emitChatRequest(ir, target);
  return { ir, body: emitted.body, dropped: [...new Set([...ir.dropped, ...emitted.dropped])] };
}

/** An upstream HTTP error body, read in the upstream's format. */
export function readUpstreamError(upstream: UpstreamFormat, status: number, text: string): IrError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (upstream === 'messages') return errorFromMessages(status, body);
  const error = typeof body === 'object' && body !== null ? (body as Json).error : undefined;
  return errorFromOpenAi(status, error ?? { message: text.slice(0, 200) || `The upstream answered ${status}.` });
}

/** An error as the client's format expects it before any byte was sent. */
export function renderClientError(client: ClientFormat, error: IrError, requestId: string): { status: number; body: string } {
  if (client === 'messages') {
    const { status, type, message } = errorToMessages(error);
    return { status, body: JSON.stringify({ type: 'error', error: { type, message }, request_id: requestId }) };
  }
  const { status, type, code, message } = errorToResponses(error);
  return { status, body: JSON.stringify({ error: { message, type, param: null, code } }) };
}

const DECODERS: Record<UpstreamFormat, () => StreamDecoder> = {
  messages: () => new MessagesStreamDecoder(),
  responses: () => new ResponsesStreamDecoder(),
  chat: () => new ChatStreamDecoder(),
};

/**
 * Upstream stream bytes in, client stream text out: SSE framing, then the upstream's decoder,
 * then the client's encoder. Pure and synchronous; the caller owns I/O, timers and errors.
 */
export class StreamTranslator {
  readonly #splitter = new SseEventSplitter();
  readonly #decoder: StreamDecoder;
  readonly #encoder: StreamEncoder;
  #outputBytes = 0;

  constructor(client: ClientFormat, upstream: UpstreamFormat, context: EncoderContext) {
    this.#decoder = DECODERS[upstream]();
    this.#encoder = client === 'messages' ? new MessagesStreamEncoder(context) : new ResponsesStreamEncoder(context);
  }

  push(chunk: Uint8Array): string {
    let out = '';
    this.#splitter.push(chunk, (bytes) => {
      const fields = parseSseEvent(bytes);
      if (fields.data === '' && fields.event === undefined) return;
      for (const event of this.#decoder.decode({ type: fields.event ?? sseEventType(fields), data: fields.data })) {
        if (event.type === 'text_delta' || event.type === 'reasoning_delta') this.#outputBytes += event.text.length;
        else if (event.type === 'tool_input_delta') this.#outputBytes += event.json.length;
        out += this.#encoder.encode(event);
      }
    });
    return out;
  }

  /** The upstream ended: a stream that did not finish is reported, never passed off as complete. */
  end(): string {
    if (this.#encoder.finished) return '';
    return this.#encoder.fail({ category: 'server', message: 'The upstream closed the stream before it was complete.' });
  }

  fail(error: IrError): string {
    return this.#encoder.fail(error);
  }

  keepalive(): string {
    return this.#encoder.finished ? '' : this.#encoder.keepalive();
  }

  get finished(): boolean {
    return this.#encoder.finished;
  }

  /** Characters of generated content relayed, for streams cut short. */
  get outputBytes(): number {
    return this.#outputBytes;
  }

  get usage(): IrUsage {
    return this.#encoder.usage;
  }

  get error(): IrError | undefined {
    return this.#encoder.error;
  }

  result(): Record<string, unknown> {
    return this.#encoder.result();
  }
}
