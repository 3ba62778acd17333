import type { Readable } from 'node:stream';
import { MessagesStreamObserver } from '../../../lambda/formats/messages/stream-observer.ts';
import { ResponsesStreamObserver } from '../../../lambda/formats/responses/stream-observer.ts';
import type { StreamObserver } from '../../../lambda/formats/stream-observer.ts';
import { PassthroughProcessor, RELAY_FAULT_MESSAGE, relayStream, type StreamProcessor } from '../../../lambda/upstream/relay.ts';
import { collect, randomChunks, streamOf } from '../../support/chunking.ts';
import { fixture } from '../../support/upstream-stub.ts';

function relay(chunks: Uint8Array[], observer: StreamObserver, options: { failAfter?: boolean } = {}) {
  const ends: string[] = [];
  let firstBytes = 0;
  const stream = relayStream(streamOf(chunks, options), new PassthroughProcessor(observer), {
    onFirstByte: () => firstBytes++,
    onEnd: (outcome) => ends.push(outcome),
    abortUpstream: () => {},
    describeFailure: () => ({ outcome: 'upstream_failed', message: 'The upstream connection failed mid-stream.' }),
  });
  return { stream, ends, firstBytes: () => firstBytes };
}

/** Parses an SSE text into [event name, data object] pairs. */
function events(text: string): [string | undefined, Record<string, unknown>][] {
  return text
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      const name = /^event: (.*)$/m.exec(block)?.[1];
      return [name, JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null')];
    });
}

describe('relayStream passthrough, Messages', () => {
  const bytes = Buffer.from(fixture('anthropic/thinking-tool-stream.sse'));

  test('passes bytes through unchanged at random chunk boundaries and reads the final usage', async () => {
    for (let seed = 1; seed <= 100; seed++) {
      const observer = new MessagesStreamObserver();
      const { stream, ends, firstBytes } = relay(randomChunks(bytes, seed, 1 + (seed % 50)), observer);
      expect((await collect(stream)).equals(bytes)).toBe(true);
      expect(ends).toEqual(['ok']);
      expect(firstBytes()).toBe(1);
      // message_start has input and cache counts; message_delta has the cumulative output count.
      expect(observer.usage).toEqual({ inputTokens: 25, outputTokens: 42, cacheReadTokens: 1024, cacheWriteTokens: 3 });
    }
  });

  test('an upstream that dies mid-event gets whole events, then an error event, never a torn frame', async () => {
    const cut = bytes.indexOf('"partial_json":"{') + 5;
    for (let seed = 1; seed <= 30; seed++) {
      const observer = new MessagesStreamObserver();
      const { stream, ends } = relay(randomChunks(bytes.subarray(0, cut), seed, 40), observer, { failAfter: true });
      const text = (await collect(stream)).toString('utf8');
      const parsed = events(text);
      expect(parsed.at(-1)).toEqual(['error', { type: 'error', error: { type: 'api_error', message: 'The upstream connection failed mid-stream.' } }]);
      // Everything before the error is a prefix of the upstream's complete events.
      expect(bytes.toString('utf8').startsWith(text.slice(0, text.lastIndexOf('event: error')))).toBe(true);
      expect(ends).toEqual(['upstream_failed']);
    }
  });

  test('a stream that ends cleanly before message_stop is reported as truncated', async () => {
    const upToStop = bytes.subarray(0, bytes.indexOf('event: message_stop'));
    const { stream, ends } = relay([upToStop], new MessagesStreamObserver());
    const parsed = events((await collect(stream)).toString('utf8'));
    expect(parsed.at(-1)?.[0]).toBe('error');
    expect(ends).toEqual(['upstream_truncated']);
  });

  test("the upstream's own error event is terminal: nothing is added, and it is logged as the upstream's error", async () => {
    const upstream = Buffer.from('event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":3}}}\n\nevent: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n');
    const { stream, ends } = relay([upstream], new MessagesStreamObserver());
    expect((await collect(stream)).equals(upstream)).toBe(true);
    expect(ends).toEqual(['upstream_error']);
  });

  test('a reset after message_stop loses nothing and adds nothing', async () => {
    const { stream, ends } = relay([bytes], new MessagesStreamObserver(), { failAfter: true });
    expect((await collect(stream)).equals(bytes)).toBe(true);
    expect(ends).toEqual(['ok']);
  });
});

/** An upstream that sends `chunks` and then keeps the connection open without ending it. */
function streamThenSilence(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let index = 0;
  return new ReadableStream({
    pull(controller) {
      if (index < chunks.length) controller.enqueue(chunks[index++] as Uint8Array);
      else return new Promise<void>(() => {});
    },
  });
}

/** A client that reads until `until` has arrived, then hangs up (the response stream destroys the relay). */
async function readThenHangUp(stream: Readable, until: string): Promise<string> {
  const chunks = stream[Symbol.asyncIterator]();
  let text = '';
  while (!text.includes(until)) {
    const { value, done } = (await chunks.next()) as IteratorResult<Uint8Array>;
    if (done) break;
    text += Buffer.from(value).toString('utf8');
  }
  stream.destroy(new Error('client closed'));
  return text;
}

describe('relayStream, a client hanging up', () => {
  const messages = Buffer.from(fixture('anthropic/thinking-tool-stream.sse'));
  const responses = Buffer.from(fixture('openai/reasoning-tool-stream.sse'));
  const cases = [
    { format: 'Messages', bytes: messages, observer: () => new MessagesStreamObserver(), terminal: 'event: message_stop', before: 'event: content_block_stop' },
    { format: 'Responses', bytes: responses, observer: () => new ResponsesStreamObserver('resp_fallback'), terminal: 'event: response.completed', before: 'event: response.output_item.done' },
  ];

  test.each(cases)('$format: after the terminal event, before the upstream body ended, is a delivered answer (ok) with its usage', async ({ bytes, observer, terminal }) => {
    for (let seed = 1; seed <= 30; seed++) {
      const watched = observer();
      const ends: string[] = [];
      const aborts: string[] = [];
      const stream = relayStream(streamThenSilence(randomChunks(bytes, seed, 40)), new PassthroughProcessor(watched), {
        onFirstByte: () => {},
        onEnd: (outcome) => ends.push(outcome),
        abortUpstream: (reason) => aborts.push(reason),
        describeFailure: () => ({ outcome: 'upstream_failed', message: 'failed' }),
      });
      const text = await readThenHangUp(stream, terminal);
      expect(text.includes(terminal)).toBe(true);
      expect(ends).toEqual(['ok']);
      expect(aborts).toHaveLength(1);
      expect(watched.usage?.outputTokens).toBeGreaterThan(0);
    }
  });

  test.each(cases)('$format: before the terminal event is client_closed', async ({ bytes, observer, before, terminal }) => {
    const ends: string[] = [];
    const cut = bytes.indexOf('\n\n', bytes.indexOf(before)) + 2;
    const stream = relayStream(streamThenSilence([bytes.subarray(0, cut), bytes.subarray(cut)]), new PassthroughProcessor(observer()), {
      onFirstByte: () => {},
      onEnd: (outcome) => ends.push(outcome),
      abortUpstream: () => {},
      describeFailure: () => ({ outcome: 'upstream_failed', message: 'failed' }),
    });
    const text = await readThenHangUp(stream, before);
    expect(text.includes(terminal)).toBe(false);
    expect(ends).toEqual(['client_closed']);
  });
});

describe('relayStream passthrough, Responses', () => {
  const bytes = Buffer.from(fixture('openai/reasoning-tool-stream.sse'));

  test('passes bytes through and reads usage from response.completed', async () => {
    for (let seed = 1; seed <= 100; seed++) {
      const observer = new ResponsesStreamObserver('resp_fallback');
      const { stream } = relay(randomChunks(bytes, seed, 1 + (seed % 70)), observer);
      expect((await collect(stream)).equals(bytes)).toBe(true);
      // OpenAI counts cached tokens inside input_tokens; our usage does not.
      expect(observer.usage).toEqual({ inputTokens: 1024, outputTokens: 30, cacheReadTokens: 1024, cacheWriteTokens: 0 });
    }
  });

  test('a failure ends with response.failed continuing the sequence numbers and keeping the response id', async () => {
    const cut = bytes.indexOf('event: response.function_call_arguments.done');
    const { stream, ends } = relay([bytes.subarray(0, cut)], new ResponsesStreamObserver('resp_fallback'), { failAfter: true });
    const parsed = events((await collect(stream)).toString('utf8'));
    const [name, failed] = parsed.at(-1) as [string, Record<string, any>];
    const previous = parsed.at(-2)?.[1] as { sequence_number: number };
    expect(name).toBe('response.failed');
    expect(failed.sequence_number).toBe(previous.sequence_number + 1);
    expect(failed.response).toMatchObject({ id: 'resp_fixture01', status: 'failed', error: { code: 'server_error' } });
    expect(ends).toEqual(['upstream_failed']);
  });

  test('a failure before any event still produces a well-formed response.failed', async () => {
    const { stream } = relay([], new ResponsesStreamObserver('resp_fallback'), { failAfter: true });
    const [[name, failed]] = events((await collect(stream)).toString('utf8')) as [[string, Record<string, any>]];
    expect(name).toBe('response.failed');
    expect(failed).toMatchObject({ sequence_number: 0, response: { id: 'resp_fallback', status: 'failed' } });
  });
});

describe('relayStream never errors its stream, even when the gateway itself fails', () => {
  const text = (value: string) => new TextEncoder().encode(value);
  /** A processor that passes chunks through and fails as told; `fail` answers in a marker format. */
  function faulty(options: { pushThrowsAt?: number; endThrows?: boolean; failThrows?: boolean; keepaliveThrows?: boolean }): StreamProcessor {
    let pushes = 0;
    return {
      push(chunk) {
        pushes += 1;
        if (pushes === options.pushThrowsAt) throw new TypeError("Cannot read properties of undefined (reading 'index')");
        return chunk;
      },
      end() {
        if (options.endThrows) throw new Error('end failed');
        return { bytes: undefined, outcome: 'ok' };
      },
      fail(message) {
        if (options.failThrows) throw new Error('fail failed too');
        return text(`[error: ${message}]`);
      },
      ...(options.keepaliveThrows
        ? {
            keepalive: () => {
              throw new Error('keepalive failed');
            },
          }
        : {}),
      finished: false,
    };
  }
  function run(source: ReadableStream<Uint8Array>, processor: StreamProcessor, extra: { keepaliveMs?: number } = {}) {
    const ends: string[] = [];
    const faults: unknown[] = [];
    const aborts: string[] = [];
    const stream = relayStream(source, processor, {
      onFirstByte: () => {},
      onEnd: (outcome) => ends.push(outcome),
      abortUpstream: (reason) => aborts.push(reason),
      describeFailure: () => ({ outcome: 'upstream_failed', message: 'The upstream connection failed mid-stream.' }),
      onFault: (error) => faults.push(error),
      ...extra,
    });
    return { stream, ends, faults, aborts };
  }

  test('a processor that throws on a chunk: what was relayed, then the format error; logged as internal_error', async () => {
    const { stream, ends, faults, aborts } = run(streamOf([text('one;'), text('two;'), text('three;')]), faulty({ pushThrowsAt: 2 }));
    expect((await collect(stream)).toString()).toBe(`one;[error: ${RELAY_FAULT_MESSAGE}]`);
    expect(ends).toEqual(['internal_error']);
    expect(String(faults[0])).toContain('Cannot read properties of undefined');
    expect(aborts).toEqual(['gateway fault']);
  });

  test('a processor that cannot even write its error: the stream still ends cleanly', async () => {
    const { stream, ends } = run(streamOf([text('one;'), text('two;')]), faulty({ pushThrowsAt: 2, failThrows: true }));
    expect((await collect(stream)).toString()).toBe('one;');
    expect(ends).toEqual(['internal_error']);
  });

  test('a processor that throws at the upstream end', async () => {
    const { stream, ends } = run(streamOf([text('one;')]), faulty({ endThrows: true }));
    expect((await collect(stream)).toString()).toBe(`one;[error: ${RELAY_FAULT_MESSAGE}]`);
    expect(ends).toEqual(['internal_error']);
  });

  test('a keepalive that throws in its timer: no uncaught exception, the stream ends with the format error', async () => {
    const silent = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}) });
    const uncaught: unknown[] = [];
    const listener = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', listener);
    try {
      const { stream, ends } = run(silent, faulty({ keepaliveThrows: true }), { keepaliveMs: 10 });
      expect((await collect(stream)).toString()).toBe(`[error: ${RELAY_FAULT_MESSAGE}]`);
      expect(ends).toEqual(['internal_error']);
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', listener);
    }
  });
});
