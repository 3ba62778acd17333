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
  // Not aborted, the upstream would close after its 100 events, 10 s on.
  expect(Date.now() - abortedAt).toBeLessThan(5_000);
  const [line] = await waitForLogs(gateway, 1);
  expect(line).toMatchObject({ outcome: 'client_closed', status: 200 });
});

test('bytes reach the client as the upstream produces them, not buffered', async () => {
  const events = sseEvents(fixture('anthropic/text-stream.sse'));
  let written = 0;
  upstream.reply((request, res) => {
    const write = res.write.bind(res) as (piece: string) => boolean;
    res.write = ((piece: string) => (written++, write(piece))) as typeof res.write;
    return sendSse(events, { gapMs: 150 })(request, res);
  });
  const started = Date.now();
  const response = await fetch(`${gateway.url}/first/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const arrivals: number[] = [];
  let writtenAtFirst = 0;
  for await (const _chunk of response.body!) if (arrivals.push(Date.now() - started) === 1) writtenAtFirst = written;
  // Eight events 150 ms apart: the first must arrive long before the last was sent (counted in
  // the upstream's writes, not in ms, which a loaded machine stretches).
  expect(arrivals.length).toBeGreaterThanOrEqual(events.length);
  expect(writtenAtFirst).toBeLessThanOrEqual(events.length / 2);
  expect((arrivals.at(-1) as number) - (arrivals[0] as number)).toBeGreaterThan(800);
});
