import net from 'node:net';
import { logOf, startGateway, waitForLogs, type Harness } from '../../support/gateway-harness.ts';
import { fixture, sendSse, sseEvents, startUpstream, type UpstreamStub } from '../../support/upstream-stub.ts';

/**
 * What the local server does that Lambda cannot: it sees the client. Every case here once
 * stopped `npm start` or held memory; after each one the server must still answer.
 */
let upstream: UpstreamStub;
let gateway: Harness;
let key: string;
let port: number;

beforeAll(async () => {
  upstream = await startUpstream();
  gateway = await startGateway({
    config: { upstreams: { ant: { type: 'anthropic', baseUrl: upstream.url } }, routes: [{ model: '*', upstream: 'ant' }] },
    server: { clientStallTimeoutMs: 300, headersTimeoutMs: 1_000 },
  });
  ({ key } = await gateway.issueKey());
  port = Number(new URL(gateway.url).port);
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

afterEach(async () => {
  // The server is still there and serves.
  const response = await fetch(`${gateway.url}/first`, { method: 'HEAD' });
  expect(response.status).toBe(200);
});

/** A raw connection: what it received, and when the server closed it. */
function raw(text: string): { socket: net.Socket; received: () => string; closed: Promise<void> } {
  let received = '';
  const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
  socket.on('data', (chunk) => (received += chunk.toString('latin1')));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return { socket, received: () => received, closed };
}

const messagesBody = (stream: boolean) => JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 10, stream, messages: [{ role: 'user', content: 'hi' }] });

test('an unauthenticated upload is refused from its headers alone: 401 in its format, no body read, connection closed', async () => {
  const before = upstream.requests.length;
  const connection = raw('POST /first/v1/messages HTTP/1.1\r\nhost: x\r\nauthorization: Bearer gwk_nope\r\ncontent-type: application/json\r\ncontent-length: 30000000\r\n\r\n');
  await connection.closed;
  expect(connection.received()).toMatch(/^HTTP\/1\.1 401 /);
  expect(connection.received()).toContain('"type":"authentication_error"');
  expect(upstream.requests.length).toBe(before);
});

test('a client that hangs up while the upstream has not answered aborts the upstream call; logged client_closed (499)', async () => {
  upstream.reply(async (_request, res) => {
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    if (!res.destroyed) res.end();
  });
  const body = messagesBody(true);
  const connection = raw(`POST /first/v1/messages HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
  await waitForUpstreamCalls(1);
  const call = upstream.requests.at(-1)!;
  const leftAt = Date.now();
  connection.socket.resetAndDestroy();
  await call.closed;
  expect(Date.now() - leftAt).toBeLessThan(2_000);
  const line = await eventuallyLog((entry) => entry.outcome === 'client_closed');
  expect(line).toMatchObject({ status: 499, route: 'messages' });
});

test('a client that stops reading a stream is logged client_stalled, not blamed on the upstream, and the upstream is released', async () => {
  const events = sseEvents(fixture('anthropic/text-stream.sse'));
  // Large events, sent fast, for ever: only the client's not reading holds them back.
  const filler = events[3]!.replace('"text":"', `"text":"${'x'.repeat(64 * 1024)}`);
  upstream.reply(sendSse([...events.slice(0, 3), ...Array<string>(2_000).fill(filler)], { gapMs: 1 }));
  const body = messagesBody(true);
  const connection = raw(`POST /first/v1/messages HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
  await waitForUpstreamCalls(1);
  const call = upstream.requests.at(-1)!;
  connection.socket.pause();
  await call.closed;
  const line = await eventuallyLog((entry) => entry.outcome === 'client_stalled');
  expect(line).toMatchObject({ status: 200, route: 'messages' });
  connection.socket.destroy();
});

test('headers over Node\'s limit get 431 with a body in the route\'s format; a malformed head gets 400', async () => {
  const big = raw(`GET /second/v1/models HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(40_000)}\r\n\r\n`);
  await big.closed;
  expect(big.received()).toMatch(/^HTTP\/1\.1 431 /);
  expect(big.received()).toContain('"code":"request_header_fields_too_large"');
  const bad = raw('NOT HTTP\r\n\r\n');
  await bad.closed;
  expect(bad.received()).toMatch(/^HTTP\/1\.1 400 /);
});

test('a head that does not arrive in time is cut off with 408', async () => {
  const slow = raw('POST /first/v1/messages HTTP/1.1\r\nhost: x\r\n');
  const started = Date.now();
  await slow.closed;
  expect(Date.now() - started).toBeLessThan(4_000);
  expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
});

test('drain ends a stream still running after the grace period with its format\'s error event, and logs it', async () => {
  const events = sseEvents(fixture('anthropic/text-stream.sse'));
  upstream.reply(sendSse([...events.slice(0, 3), ...Array<string>(100).fill(events[3]!)], { gapMs: 100 }));
  const other = await startGateway({
    config: { upstreams: { ant: { type: 'anthropic', baseUrl: upstream.url } }, routes: [{ model: '*', upstream: 'ant' }] },
    shareStoreWith: gateway,
  });
  try {
    const response = await fetch(`${other.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: messagesBody(true) });
    const text = response.text();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await other.server.drain(100);
    const received = await text;
    expect(received).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"The gateway is shutting down; retry the request\."\}\}\n\n$/);
    const [line] = await waitForLogs(other, 1);
    expect(line).toMatchObject({ status: 200, outcome: 'shutdown' });
  } finally {
    await other.close();
  }
});

async function waitForUpstreamCalls(count: number): Promise<void> {
  const target = upstream.requests.length + count;
  for (const until = Date.now() + 5_000; upstream.requests.length < target; ) {
    if (Date.now() > until) throw new Error('the upstream was not called');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function eventuallyLog(match: (entry: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  for (const until = Date.now() + 5_000; ; ) {
    const line = gateway.logs.find(match);
    if (line) return logOf(gateway, line.requestId as string);
    if (Date.now() > until) throw new Error(`no matching log line in ${JSON.stringify(gateway.logs.slice(-5))}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('a whole answer leaves in one write: head, body and the chunked terminator in one socket write', async () => {
  upstream.reply((_request, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(fixture('anthropic/text.json'));
  });
  // The server's side of this connection counts its writes (each `_write`/`_writev` is one write to the socket).
  let writes = 0;
  gateway.server.once('connection', (serverSide: net.Socket) => {
    const counted = serverSide as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
    for (const name of ['_write', '_writev'] as const) {
      const original = counted[name].bind(serverSide);
      counted[name] = (...args: unknown[]) => {
        writes++;
        return original(...args);
      };
    }
  });
  const body = messagesBody(false);
  let received = '';
  const socket = net.connect(port, '127.0.0.1', () =>
    socket.write(`POST /first/v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: ${key}\r\nanthropic-version: 2023-06-01\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`),
  );
  await new Promise<void>((resolve, reject) => {
    socket.on('error', reject);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      if (received.endsWith('\r\n0\r\n\r\n')) resolve();
    });
  });
  socket.destroy();
  expect(received).toMatch(/^HTTP\/1\.1 200 /);
  expect(received).toContain('"id": "msg_01FixtureJson"');
  expect(writes).toBe(1);
});
