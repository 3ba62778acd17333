/**
 * Incremental Server-Sent Events framing over raw bytes.
 *
 * The gateway relays upstream streams byte-for-byte, but only in whole events: that way a
 * failure can always be reported with a clean in-stream error event, never inside a half-sent
 * frame. `\n` and `\r` are ASCII, so splitting UTF-8 bytes at them can never cut a character.
 * Events end at an empty line (`\n\n` or `\r\n\r\n`); a lone `\r` line ending is not supported
 * (no upstream we speak to sends one).
 * @see https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
 */
export class SseEventSplitter {
  #pending: Buffer = Buffer.alloc(0);

  /**
   * Feeds one chunk; calls `onEvent` for every event it completes (a view into the bytes, the
   * terminating blank line included) and returns the bytes of all completed events, or
   * `undefined` when the chunk completed none.
   */
  push(chunk: Uint8Array, onEvent: (event: Buffer) => void): Buffer | undefined {
    const input = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const buf = this.#pending.length === 0 ? input : Buffer.concat([this.#pending, input]);
    // Resume scanning where the previous chunk's partial line began.
    let lineStart = this.#pending.length === 0 ? 0 : lastLineStart(this.#pending);
    let eventStart = 0;
    for (let nl = buf.indexOf(10, lineStart); nl !== -1; nl = buf.indexOf(10, lineStart)) {
      const blank = nl === lineStart || (nl === lineStart + 1 && buf[lineStart] === 13);
      lineStart = nl + 1;
      if (!blank) continue;
      // A stray blank line between events is forwarded but is not an event.
      const size = nl + 1 - eventStart;
      const onlyBlank = size === 1 || (size === 2 && buf[eventStart] === 13);
      if (!onlyBlank) onEvent(buf.subarray(eventStart, nl + 1));
      eventStart = nl + 1;
    }
    this.#pending = eventStart === buf.length ? Buffer.alloc(0) : Buffer.from(buf.subarray(eventStart));
    return eventStart === 0 ? undefined : buf.subarray(0, eventStart);
  }

  /** Bytes of an event the stream has not finished (non-empty means the stream was cut). */
  get remainder(): Buffer {
    return this.#pending;
  }
}

function lastLineStart(buf: Buffer): number {
  const nl = buf.lastIndexOf(10);
  return nl === -1 ? 0 : nl + 1;
}

export interface SseFields {
  /** The `event:` field, or undefined when the event has none. */
  event: string | undefined;
  /** All `data:` lines joined with `\n`, per the SSE spec. */
  data: string;
}

/** Parses one complete event (as passed to `onEvent`) into its fields; comments are skipped. */
export function parseSseEvent(bytes: Uint8Array): SseFields {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  let event: string | undefined;
  let data: string | undefined;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const line = text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end);
    start = end + 1;
    if (line.length === 0 || line.charCodeAt(0) === 58 /* ':' comment */) continue;
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (name === 'event') event = value;
    else if (name === 'data') data = data === undefined ? value : `${data}\n${value}`;
  }
  return { event, data: data ?? '' };
}

/** The `type` an event announces: its `event:` field, else the JSON payload's `type`. */
export function sseEventType(fields: SseFields): string | undefined {
  if (fields.event !== undefined) return fields.event;
  const match = /^\s*\{\s*"type"\s*:\s*"([^"]+)"/.exec(fields.data);
  if (match) return match[1];
  try {
    const parsed: unknown = JSON.parse(fields.data);
    return typeof parsed === 'object' && parsed !== null && 'type' in parsed ? String(parsed.type) : undefined;
  } catch {
    return undefined;
  }
}

const EVENT_FIELD = Buffer.from('event:');

/**
 * Fast path for the hot loop: the `event:` name when it is the event's first line (as Anthropic
 * and OpenAI send it), without decoding the rest; undefined otherwise.
 */
export function leadingEventName(bytes: Buffer): string | undefined {
  if (bytes.length < 7 || bytes.compare(EVENT_FIELD, 0, 6, 0, 6) !== 0) return undefined;
  let end = bytes.indexOf(10);
  if (end === -1) end = bytes.length;
  if (bytes[end - 1] === 13) end--;
  const start = bytes[6] === 32 ? 7 : 6;
  return bytes.toString('latin1', start, end);
}

/** An event's type from its bytes: the fast first-line `event:` read, else a full parse. */
export function eventTypeOf(bytes: Buffer): string | undefined {
  return leadingEventName(bytes) ?? sseEventType(parseSseEvent(bytes));
}
