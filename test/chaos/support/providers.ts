import type http from 'node:http';
import { fixture, sseEvents, startUpstream, type RecordedRequest, type UpstreamStub } from '../../support/upstream-stub.ts';

/**
 * Scripted loopback providers for the chaos suite: an Anthropic Messages one and an OpenAI
 * Responses one, answering with the recorded fixtures. What a request gets is chosen by the
 * second dash-separated word of its model, so one config serves every test:
 *   ok      a normal answer (JSON or SSE, as the request asks)
 *   slow    the same, after 300 ms
 *   hold    nothing at all until the gateway closes the connection (an upstream still thinking)
 *   bigjson a non-streamed answer of 16 MB (more than loopback buffers hold), sent at once
 *   halfjson the first half of a non-streamed answer, then nothing until the gateway goes away
 *   drip    a stream that sends one small event every 100 ms until the gateway goes away
 *   flood   a stream that sends 64 KB events as fast as the gateway takes them, until it goes away
 * Every stream is cut after 30 s whatever happens, so a stub never outlives a test.
 */
export type Behaviour = 'ok' | 'slow' | 'hold' | 'bigjson' | 'halfjson' | 'drip' | 'flood' | 'linger';

export interface Providers {
  anthropic: UpstreamStub;
  openai: UpstreamStub;
  close(): Promise<void>;
}

const LONGEST_MS = 30_000;
const BIG = 16 * 1024 * 1024;

export async function startProviders(): Promise<Providers> {
  const anthropic = await startUpstream(answer('anthropic'));
  const openai = await startUpstream(answer('openai'));
  return {
    anthropic,
    openai,
    async close() {
      await Promise.all([anthropic.close(), openai.close()]);
    },
  };
}

/** The behaviour a request asked for through its model name. */
export function behaviourOf(request: RecordedRequest): Behaviour {
  let model = '';
  try {
    model = String(JSON.parse(request.body).model ?? '');
  } catch {
    // Not JSON (the gateway should never send that): answer normally, the test will see it.
  }
  const word = model.split('-')[1] ?? 'ok';
  return (['ok', 'slow', 'hold', 'bigjson', 'halfjson', 'drip', 'flood', 'linger'].includes(word) ? word : 'ok') as Behaviour;
}

/** Resolves when the gateway has closed the request's connection, or false after `ms`. */
export async function closedWithin(request: RecordedRequest, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const result = await Promise.race([request.closed.then(() => true), new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]);
  clearTimeout(timer);
  return result;
}

function answer(provider: 'anthropic' | 'openai') {
  return async (request: RecordedRequest, res: http.ServerResponse): Promise<void> => {
    const behaviour = behaviourOf(request);
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(request.body);
    } catch {
      // answered below like any request
    }
    if (behaviour === 'hold') return hold(request, res);
    if (behaviour === 'slow') await new Promise((resolve) => setTimeout(resolve, 300));
    if (request.url.endsWith('/count_tokens') || request.url.endsWith('/input_tokens')) {
      const counted = request.url.endsWith('/input_tokens') ? { object: 'response.input_tokens', input_tokens: 42 } : { input_tokens: 42 };
      return json(res, behaviour === 'bigjson' ? { ...counted, pad: 'x'.repeat(BIG) } : counted, request);
    }
    if (request.url.endsWith('/compact')) return json(res, { id: 'resp_compacted', object: 'response.compaction', output: [], usage: { input_tokens: 5, output_tokens: 1, total_tokens: 6 } });
    if (body.stream !== true) {
      const answer = JSON.parse(fixture(provider === 'anthropic' ? 'anthropic/text.json' : 'openai/text.json'));
      if (behaviour === 'bigjson') {
        if (provider === 'anthropic') answer.content[0].text = 'x'.repeat(BIG);
        else answer.output[0].content[0].text = 'x'.repeat(BIG);
      }
      return json(res, { ...answer, model: body.model }, request);
    }
    const events = sseEvents(fixture(provider === 'anthropic' ? 'anthropic/text-stream.sse' : 'openai/text-stream.sse'));
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'request-id': 'req_upstream_chaos' });
    if (behaviour === 'drip' || behaviour === 'flood') return endless(provider, events, behaviour, request, res);
    if (behaviour === 'linger') {
      // The whole stream, terminal event included, and then the connection stays open.
      res.write(events.join(''));
      return hold(request, res);
    }
    res.end(events.join(''));
  };
}

function json(res: http.ServerResponse, value: unknown, request?: RecordedRequest): void | Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_upstream_chaos' });
  const text = JSON.stringify(value);
  if (request === undefined || behaviourOf(request) !== 'halfjson') return void res.end(text);
  res.write(text.slice(0, text.length / 2));
  return hold(request, res);
}

async function hold(request: RecordedRequest, res: http.ServerResponse): Promise<void> {
  const gaveUp = setTimeout(() => res.destroy(), LONGEST_MS);
  await request.closed;
  clearTimeout(gaveUp);
}

/** The stream's opening events, then deltas until the gateway leaves (or 30 s pass). */
async function endless(provider: 'anthropic' | 'openai', events: string[], behaviour: 'drip' | 'flood', request: RecordedRequest, res: http.ServerResponse): Promise<void> {
  const opening = provider === 'anthropic' ? events.slice(0, 3) : events.slice(0, 4);
  for (const event of opening) res.write(event);
  let closed = false;
  void request.closed.then(() => (closed = true));
  const text = behaviour === 'flood' ? 'x'.repeat(64 * 1024) : 'tick ';
  const until = Date.now() + LONGEST_MS;
  for (let sequence = opening.length; !closed && Date.now() < until; sequence++) {
    const delta =
      provider === 'anthropic'
        ? `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })}\n\n`
        : `event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', sequence_number: sequence, item_id: 'msg_fixture01', output_index: 0, content_index: 0, delta: text, logprobs: [] })}\n\n`;
    const drained = res.write(delta);
    if (behaviour === 'drip') await new Promise((resolve) => setTimeout(resolve, 100));
    else if (!drained) await drainOrEnd(res, request, until);
  }
  res.destroy();
}

/** Waits for the gateway to take more, to leave, or for the stub's time to run out. */
function drainOrEnd(res: http.ServerResponse, request: RecordedRequest, until: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(done, Math.max(0, until - Date.now()));
    function done() {
      clearTimeout(timer);
      res.off('drain', done);
      resolve();
    }
    res.once('drain', done);
    void request.closed.then(done);
  });
}
