import { startGateway, waitForLogs, type Harness } from '../support/gateway-harness.ts';
import { fixture, sendSse, sseEvents, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';

let upstream: UpstreamStub;
let gateway: Harness;
let key: string;

beforeAll(async () => {
  upstream = await startUpstream();
  gateway = await startGateway({
    config: { upstreams: { ant: { type: 'anthropic', baseUrl: upstream.url } }, routes: [{ model: '*', upstream: 'ant' }] },
  });
  ({ key } = await gateway.issueKey());
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

test('a client that disconnects mid-stream aborts the upstream request', async () => {
  const events = sseEvents(fixture('anthropic/text-stream.sse'));
  // A slow upstream: one event every 100 ms, far longer than the client stays.
  upstream.reply(sendSse([...events.slice(0, 3), ...Array(100).fill(events[3]), ...events.slice(4)], { gapMs: 100 }));
  const client = new AbortController();
  const response = await fetch(`${gateway.url}/first/v1/messages`, {
    method: 'POST',
    signal: client.signal,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const reader = response.body!.getReader();
  const first = await reader.read();
  expect(new TextDecoder().decode(first.value)).toContain('message_start');
  const abortedAt = Date.now();
  client.abort();
  await upstream.requests[0]!.closed;
  expect(Date.now() - abortedAt).toBeLessThan(1_000);
  const [line] = await waitForLogs(gateway, 1);
  expect(line).toMatchObject({ outcome: 'client_closed', status: 200 });
});

test('bytes reach the client as the upstream produces them, not buffered', async () => {
  const events = sseEvents(fixture('anthropic/text-stream.sse'));
  upstream.reply(sendSse(events, { gapMs: 150 }));
  const started = Date.now();
  const response = await fetch(`${gateway.url}/first/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const arrivals: number[] = [];
  for await (const _chunk of response.body!) arrivals.push(Date.now() - started);
  // Eight events 150 ms apart: the first must arrive long before the last was sent.
  expect(arrivals.length).toBeGreaterThanOrEqual(events.length);
  expect(arrivals[0]).toBeLessThan(500);
  expect((arrivals.at(-1) as number) - (arrivals[0] as number)).toBeGreaterThan(800);
});
