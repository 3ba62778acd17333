import { SseEventSplitter, leadingEventName, parseSseEvent, sseEventType } from '../../../../lambda/formats/sse/event-splitter.ts';
import { randomChunks } from '../../../support/chunking.ts';
import { fixture } from '../../../support/upstream-stub.ts';

function split(bytes: Uint8Array, chunks: Uint8Array[]): { events: string[]; out: Buffer; remainder: Buffer } {
  const splitter = new SseEventSplitter();
  const events: string[] = [];
  const out: Buffer[] = [];
  for (const chunk of chunks) {
    const complete = splitter.push(chunk, (event) => events.push(event.toString('utf8')));
    if (complete) out.push(Buffer.from(complete));
  }
  return { events, out: Buffer.concat(out), remainder: splitter.remainder };
}

describe('SseEventSplitter', () => {
  const streams = ['anthropic/text-stream.sse', 'anthropic/thinking-tool-stream.sse', 'openai/text-stream.sse', 'openai/reasoning-tool-stream.sse'];

  test.each(streams)('%s: identical events and bytes at 200 random chunkings', (name) => {
    const bytes = Buffer.from(fixture(name));
    const whole = split(bytes, [bytes]);
    expect(whole.out.equals(bytes)).toBe(true);
    expect(whole.events.join('')).toBe(bytes.toString('utf8'));
    for (let seed = 1; seed <= 200; seed++) {
      const result = split(bytes, randomChunks(bytes, seed, 1 + (seed % 90)));
      expect(result.events).toEqual(whole.events);
      expect(result.out.equals(bytes)).toBe(true);
      expect(result.remainder.length).toBe(0);
    }
  });

  test('CRLF framing and comments are split the same way', () => {
    const text = ': keepalive\r\n\r\nevent: a\r\ndata: {"x":1}\r\n\r\ndata: {"type":"b"}\r\n\r\n';
    const bytes = Buffer.from(text);
    for (let seed = 1; seed <= 50; seed++) {
      const { events, out } = split(bytes, randomChunks(bytes, seed, 5));
      expect(events).toEqual([': keepalive\r\n\r\n', 'event: a\r\ndata: {"x":1}\r\n\r\n', 'data: {"type":"b"}\r\n\r\n']);
      expect(out.equals(bytes)).toBe(true);
    }
  });

  test('an unfinished event is held back and reported as remainder', () => {
    const { events, out, remainder } = split(Buffer.from('event: a\ndata: 1\n\nevent: b\ndata: {"par'), [Buffer.from('event: a\ndata: 1\n\nevent: b\ndata: {"par')]);
    expect(events).toEqual(['event: a\ndata: 1\n\n']);
    expect(out.toString()).toBe('event: a\ndata: 1\n\n');
    expect(remainder.toString()).toBe('event: b\ndata: {"par');
  });

  test('stray blank lines are forwarded but are not events', () => {
    const { events, out } = split(Buffer.from('\n\ndata: 1\n\n\n'), [Buffer.from('\n\ndata: 1\n\n\n')]);
    expect(events).toEqual(['data: 1\n\n']);
    expect(out.toString()).toBe('\n\ndata: 1\n\n\n');
  });
});

describe('parseSseEvent', () => {
  test('joins data lines, strips one leading space, skips comments', () => {
    expect(parseSseEvent(Buffer.from(': hi\nevent:  spaced\ndata: a\ndata:b\n\n'))).toEqual({ event: ' spaced', data: 'a\nb' });
  });

  test('type comes from the event line, else from the JSON payload', () => {
    expect(sseEventType(parseSseEvent(Buffer.from('event: message_stop\ndata: {}\n\n')))).toBe('message_stop');
    expect(sseEventType(parseSseEvent(Buffer.from('data: {"type":"response.completed","x":1}\n\n')))).toBe('response.completed');
    expect(sseEventType(parseSseEvent(Buffer.from('data: { "sequence_number": 1, "type": "late" }\n\n')))).toBe('late');
    expect(sseEventType(parseSseEvent(Buffer.from('data: [DONE]\n\n')))).toBeUndefined();
  });

  test('leadingEventName reads only a first-line event field', () => {
    expect(leadingEventName(Buffer.from('event: message_delta\ndata: {}\n\n'))).toBe('message_delta');
    expect(leadingEventName(Buffer.from('event:ping\r\ndata: {}\r\n\r\n'))).toBe('ping');
    expect(leadingEventName(Buffer.from('data: {}\n\n'))).toBeUndefined();
  });
});
