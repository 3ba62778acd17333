import { eventTypeOf, parseSseEvent } from '../sse/event-splitter.ts';
import type { StreamObserver } from '../stream-observer.ts';
import { fromResponsesResult, isRecord, type Usage } from '../../observability/usage.ts';
import { parseJsonObject } from '../json-fields.ts';

const DELTA_ENVELOPE_BYTES = 160;
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

/**
 * Responses streams: usage comes from the terminal `response.completed` / `.incomplete` /
 * `.failed`. To end a broken stream the observer emits `response.failed` continuing the
 * upstream's `sequence_number`s, which Codex treats as a retryable server error.
 * @see docs/wire-formats.md §2.4
 * @see https://platform.openai.com/docs/api-reference/responses-streaming
 */
export class ResponsesStreamObserver implements StreamObserver {
  finished = false;
  errored = false;
  usage: Usage | undefined;
  usageFinal = false;
  outputBytes = 0;
  #responseId: string | undefined;
  #model: string | undefined;
  #createdAt: number | undefined;
  #last: Buffer | undefined;
  readonly #fallbackId: string;

  constructor(fallbackId: string) {
    this.#fallbackId = fallbackId;
  }

  event(bytes: Buffer): void {
    this.#last = bytes;
    const type = eventTypeOf(bytes);
    if (type?.endsWith('.delta') === true) {
      // The event minus its envelope (~160 bytes: ids, indexes, sequence number), unparsed.
      this.outputBytes += Math.max(0, bytes.length - DELTA_ENVELOPE_BYTES);
    } else if (type === 'response.created') {
      const response = parseJsonObject(parseSseEvent(bytes).data)?.response;
      if (isRecord(response)) {
        this.#responseId = typeof response.id === 'string' ? response.id : undefined;
        this.#model = typeof response.model === 'string' ? response.model : undefined;
        this.#createdAt = typeof response.created_at === 'number' ? response.created_at : undefined;
      }
    } else if (type !== undefined && TERMINAL.has(type)) {
      this.finished = true;
      this.errored = type === 'response.failed' || type === 'error';
      const response = parseJsonObject(parseSseEvent(bytes).data)?.response;
      const usage = isRecord(response) ? fromResponsesResult(response) : undefined;
      if (usage) {
        this.usage = usage;
        this.usageFinal = true;
      }
    }
  }

  failure(message: string): string {
    this.finished = true;
    const last = this.#last && parseJsonObject(parseSseEvent(this.#last).data);
    const sequence = typeof last?.sequence_number === 'number' ? last.sequence_number + 1 : 0;
    const event = {
      type: 'response.failed',
      sequence_number: sequence,
      response: {
        id: this.#responseId ?? this.#fallbackId,
        object: 'response',
        created_at: this.#createdAt ?? Math.floor(Date.now() / 1000),
        status: 'failed',
        error: { code: 'server_error', message },
        incomplete_details: null,
        model: this.#model ?? null,
        output: [],
        usage: null,
      },
    };
    return `event: response.failed\ndata: ${JSON.stringify(event)}\n\n`;
  }
}
