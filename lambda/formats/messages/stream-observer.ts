import { eventTypeOf, parseSseEvent } from '../sse/event-splitter.ts';
import type { StreamObserver } from '../stream-observer.ts';
import { fromMessagesUsage, isRecord, type Usage } from '../../observability/usage.ts';
import { parseJsonObject } from '../json-fields.ts';
import { messagesErrorEvent } from './errors.ts';

const DELTA_ENVELOPE_BYTES = 100;

/**
 * Messages streams: usage comes from `message_start` and the cumulative `message_delta`;
 * `message_stop` (or the upstream's own `error` event) ends the stream.
 * @see docs/wire-formats.md §1.4
 * @see https://docs.claude.com/en/api/messages-streaming
 */
export class MessagesStreamObserver implements StreamObserver {
  finished = false;
  errored = false;
  usage: Usage | undefined;
  usageFinal = false;
  outputBytes = 0;

  event(bytes: Buffer): void {
    const type = eventTypeOf(bytes);
    if (type === 'content_block_delta') {
      // The event minus its envelope (~100 bytes): counted without parsing, for the hot path.
      this.outputBytes += Math.max(0, bytes.length - DELTA_ENVELOPE_BYTES);
    } else if (type === 'message_start' || type === 'message_delta') {
      const data = parseJsonObject(parseSseEvent(bytes).data);
      const usage = type === 'message_start' ? (isRecord(data?.message) ? data.message.usage : undefined) : data?.usage;
      if (isRecord(usage)) {
        this.usage = fromMessagesUsage(usage, this.usage);
        // message_start's usage is the input side only; message_delta's is the cumulative total.
        if (type === 'message_delta') this.usageFinal = true;
      }
    } else if (type === 'message_stop' || type === 'error') {
      this.finished = true;
      this.errored = type === 'error';
    }
  }

  failure(message: string): string {
    this.finished = true;
    return messagesErrorEvent('api_error', message);
  }
}
