import { startGateway, type Harness } from '../support/gateway-harness.ts';
import { fixture, sseEvents, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';
import { parseSse } from '../support/stream-validators.ts';

let upstream: UpstreamStub;
let gateway: Harness;
let key: string;

beforeAll(async () => {
  upstream = await startUpstream();
  gateway = await startGateway({
    config: {
      upstreams: { claude: { type: 'anthropic', baseUrl: upstream.url }, gpt: { type: 'openai', baseUrl: `${upstream.url}/v1` } },
      routes: [
        { model: 'via-claude', upstream: 'claude' },
        { model: 'via-gpt', upstream: 'gpt' },
      ],
    },
    // A silence of about fourteen keepalive periods: the three the tests ask for still come if a loaded machine runs the shared timer late for a second.
    settings: { keepaliveMs: 100, upstreamIdleTimeoutMs: 1_400 },
  });
  ({ key } = await gateway.issueKey());
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

/** An upstream that starts its stream, then goes silent with the connection open (long thinking, or dead). */
function stallAfter(first: string[]) {
  upstream.reply((_request, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const event of first) res.write(event);
  });
}

async function read(path: string, body: unknown): Promise<{ text: string; elapsed: number }> {
  const started = Date.now();
  const response = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { text: await response.text(), elapsed: Date.now() - started };
}

test('Messages clients get SSE comments during upstream silence, then an error when the upstream stays silent too long', async () => {
  stallAfter(sseEvents(fixture('openai/text-stream.sse')).slice(0, 3));
  const { text, elapsed } = await read('/first/v1/messages', { model: 'via-gpt', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] });
  expect(text.match(/^: keepalive$/gm)?.length).toBeGreaterThanOrEqual(3);
  expect(parseSse(text).at(-1)?.data).toEqual({ type: 'error', error: { type: 'api_error', message: 'The upstream sent nothing for 1 s.' } });
  expect(elapsed).toBeGreaterThanOrEqual(1_350);
  expect(elapsed).toBeLessThan(4_000);
});

test('Responses clients get keepalive events in sequence, then response.failed', async () => {
  stallAfter(sseEvents(fixture('anthropic/text-stream.sse')).slice(0, 2));
  const { text } = await read('/second/v1/responses', { model: 'via-claude', input: 'hi', stream: true });
  const events = parseSse(text).map((event) => event.data);
  expect(events.filter((event) => event.type === 'keepalive').length).toBeGreaterThanOrEqual(3);
  events.forEach((event, position) => expect(event.sequence_number).toBe(position));
  expect(events.at(-1)).toMatchObject({ type: 'response.failed', response: { error: { code: 'server_error' } } });
});

test('a silent passthrough upstream is also cut at the idle limit (no keepalive is injected into passthrough bytes)', async () => {
  const head = sseEvents(fixture('anthropic/text-stream.sse')).slice(0, 2);
  stallAfter(head);
  const { text } = await read('/first/v1/messages', { model: 'via-claude', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] });
  expect(text.startsWith(head.join(''))).toBe(true);
  expect(text).not.toContain('keepalive');
  expect(parseSse(text).at(-1)?.data).toMatchObject({ type: 'error', error: { type: 'api_error' } });
});
