import { MessagesStreamObserver } from '../../../lambda/formats/messages/stream-observer.ts';
import { ResponsesStreamObserver } from '../../../lambda/formats/responses/stream-observer.ts';
import type { RequestState } from '../../../lambda/request-state.ts';
import { PassthroughProcessor, relayStream } from '../../../lambda/upstream/relay.ts';
import { chargeableUsage } from '../../../lambda/usage/metering.ts';
import { fixture, sseEvents } from '../../support/upstream-stub.ts';

/**
 * What a stream is charged, for every way it can end. The relay and the format observers are the
 * real ones, wired as passthrough.ts wires them; only the upstream is a stream made here: the
 * opening events of a recorded answer, then 64 deltas of 4 KB of generated text (64 K output
 * tokens at 4 bytes per token), then whatever the ending needs.
 */
type Family = 'messages' | 'responses';
type Ending = 'ok' | 'client_closed' | 'client_stalled' | 'shutdown' | 'deadline' | 'upstream_failed' | 'upstream_truncated' | 'upstream_idle';

const DELTAS = 64;
const TEXT = 'x'.repeat(4096);
const REQUEST = JSON.stringify({ model: 'm', max_tokens: 64000, messages: [{ role: 'user', content: 'y'.repeat(3000) }] });

function upstreamEvents(family: Family): { opening: string[]; delta: (index: number) => string; closing: string[] } {
  const events = sseEvents(fixture(family === 'messages' ? 'anthropic/text-stream.sse' : 'openai/text-stream.sse'));
  if (family === 'messages') {
    return {
      opening: events.slice(0, 3),
      delta: () => `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: TEXT } })}\n\n`,
      closing: events.slice(5),
    };
  }
  return {
    opening: events.slice(0, 4),
    delta: (index) => `event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', sequence_number: 4 + index, item_id: 'msg_fixture01', output_index: 0, content_index: 0, delta: TEXT })}\n\n`,
    closing: events.filter((event) => event.startsWith('event: response.completed')),
  };
}

/** Relays one stream that ends as `ending` and returns the request state as passthrough.ts leaves it. */
async function endedAs(family: Family, ending: Ending): Promise<RequestState> {
  const { opening, delta, closing } = upstreamEvents(family);
  const pieces = [...opening, ...Array.from({ length: DELTAS }, (_, index) => delta(index)), ...(ending === 'ok' ? closing : [])];
  let index = 0;
  const source = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (index < pieces.length) return controller.enqueue(Buffer.from(pieces[index++] as string));
      if (ending === 'shutdown' || ending === 'deadline' || ending === 'upstream_failed') controller.error(new TypeError('aborted'));
      else if (ending === 'ok' || ending === 'upstream_truncated') controller.close();
      // client_closed, client_stalled, upstream_idle: nothing more ever comes
    },
  });
  const state = { status: 200, rawBody: REQUEST } as RequestState;
  const observer = family === 'messages' ? new MessagesStreamObserver() : new ResponsesStreamObserver('resp_test');
  const ended = new Promise<void>((resolve) => {
    const stream = relayStream(source, new PassthroughProcessor(observer), {
      onFirstByte: () => {},
      abortUpstream: () => {},
      describeFailure: () => ({ outcome: ending, message: 'ended' }),
      describeCancel: () => ending,
      ...(ending === 'upstream_idle' ? { idleTimeoutMs: 40 } : {}),
      onEnd: (outcome) => {
        state.usage = observer.usage;
        state.usageFinal = observer.usageFinal;
        state.outputBytes = observer.outputBytes;
        state.outcome = outcome;
        resolve();
      },
    });
    void (async () => {
      const chunks = stream[Symbol.asyncIterator]();
      // The client reads everything the upstream sent, then leaves (or stops reading) if that is the ending.
      for (let read = 0; ; read++) {
        if ((ending === 'client_closed' || ending === 'client_stalled') && read === pieces.length) return void stream.destroy(new Error('gone'));
        const { done } = await chunks.next();
        if (done) return;
      }
    })();
  });
  await ended;
  return state;
}

describe.each(['messages', 'responses'] as const)('%s streams', (family) => {
  test('a stream that ends with its final usage is charged that usage, nothing estimated', async () => {
    const state = await endedAs(family, 'ok');
    expect(state.outcome).toBe('ok');
    expect(chargeableUsage(state)).toEqual({ usage: state.usage, estimated: false });
  });

  test.each(['client_closed', 'client_stalled', 'shutdown', 'deadline', 'upstream_failed', 'upstream_truncated', 'upstream_idle'] as const)(
    'a stream that ends as %s is charged its input and the output delivered so far',
    async (ending) => {
      const state = await endedAs(family, ending);
      expect(state.outcome).toBe(ending);
      const { usage, estimated } = chargeableUsage(state);
      expect(estimated).toBe(true);
      // 64 deltas of 4,096 bytes of text, less each event's envelope allowance: about 64 K tokens.
      expect(usage?.outputTokens).toBeGreaterThan(60_000);
      // Messages streams said their input in message_start (25); a Responses stream only says it at the end.
      expect(usage?.inputTokens).toBe(family === 'messages' ? 25 : Math.ceil(REQUEST.length / 3));
    },
  );
});

test('an answer (200) without usage is charged its input, never zero', () => {
  const state = { status: 200, rawBody: REQUEST, outcome: undefined } as RequestState;
  expect(chargeableUsage(state)).toEqual({ usage: { inputTokens: Math.ceil(REQUEST.length / 3), outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, estimated: true });
});

test("the upstream's own error answer costs nothing; so does an in-stream error before anything was generated", () => {
  expect(chargeableUsage({ status: 529, rawBody: REQUEST, outcome: 'upstream_error' } as RequestState)).toEqual({ usage: undefined, estimated: false });
  expect(chargeableUsage({ status: 200, rawBody: REQUEST, outcome: 'upstream_error' } as RequestState)).toEqual({ usage: undefined, estimated: false });
  // After some output it is charged like any cut stream.
  expect(chargeableUsage({ status: 200, rawBody: REQUEST, outcome: 'upstream_error', outputBytes: 4000 } as RequestState).usage?.outputTokens).toBe(1000);
});
