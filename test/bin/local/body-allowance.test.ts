import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { createFunctionUrlServer, type StreamingHandler } from '../../../bin/local/function-url-server.ts';
import { MAX_JSON_VALUES } from '../../../lambda/middleware/parse-body.ts';
import { listen, startGateway, type Harness } from '../../support/gateway-harness.ts';

/**
 * What a request may hold before and while its body is read: an open route takes no body, a
 * stranger's connections have a cap of their own, and what a body decodes and parses into is
 * charged to the same in-flight budget as the bytes received.
 */
const SIM = {
  upstreams: { sim: { type: 'simulator' }, slow: { type: 'simulator', delayMs: 300 } },
  routes: [
    { model: 'slow-*', upstream: 'slow' },
    { model: '*', upstream: 'sim' },
  ],
};
const MiB = 1024 * 1024;

let gateway: Harness;
let key: string;

beforeAll(async () => {
  gateway = await startGateway({ config: SIM, server: { maxInflightBodyBytes: 4 * MiB, maxDecodedBodyBytes: 3 * MiB, maxUnauthenticatedConnections: 8 } });
  ({ key } = await gateway.issueKey());
});

afterAll(() => gateway.close());

const port = () => Number(new URL(gateway.url).port);

/** A raw connection: what it received, whether the server closed it. */
function connect(text = ''): Promise<{ socket: net.Socket; received: () => string; closed: () => boolean }> {
  return new Promise((resolve) => {
    let received = '';
    let closed = false;
    const socket = net.connect(port(), '127.0.0.1', () => {
      if (text) socket.write(text);
      resolve({ socket, received: () => received, closed: () => closed });
    });
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => (closed = true));
  });
}

const until = async (condition: () => boolean, ms = 3_000) => {
  for (const end = Date.now() + ms; !condition() && Date.now() < end; ) await new Promise((resolve) => setTimeout(resolve, 10));
  return condition();
};

function post(body: Buffer | string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body });
}

const small = JSON.stringify({ model: 'sim-a', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });

test('an open route announcing a body is answered without reading it, then the connection closes; keyed bodies still fit', async () => {
  // The attack of issue 19 item 1, eight times: 32 MiB announced, one byte sent, no key.
  const probes = await Promise.all(Array.from({ length: 8 }, () => connect('GET /first/api/hello HTTP/1.1\r\nhost: x\r\ncontent-length: 33554432\r\n\r\n{')));
  for (const probe of probes) expect(await until(() => probe.received().startsWith('HTTP/1.1 200'))).toBe(true);
  const answer = await post(small);
  expect(answer.status).toBe(200);
  for (const probe of probes) expect(await until(() => probe.closed(), 5_000)).toBe(true);
});

test('connections that have shown no key are capped: the oldest is closed, a keyed one is not counted', async () => {
  const keyed = await connect(`GET /first/v1/models HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\n\r\n`);
  expect(await until(() => keyed.received().startsWith('HTTP/1.1 200'))).toBe(true);
  const idle: Awaited<ReturnType<typeof connect>>[] = [];
  for (let i = 0; i < 12; i++) idle.push(await connect());
  // The cap is 8: the 4 oldest idle connections went, the 8 newest and the keyed one stay.
  expect(await until(() => idle.filter((connection) => connection.closed()).length === 4)).toBe(true);
  expect(idle.slice(0, 4).every((connection) => connection.closed())).toBe(true);
  expect(idle.slice(4).some((connection) => connection.closed())).toBe(false);
  expect(keyed.closed()).toBe(false);
  for (const connection of [...idle, keyed]) connection.socket.destroy();
});

test('a compressed body decoding past the decoded-body cap is a 413 naming the cap', async () => {
  const body = JSON.stringify({ model: 'sim-a', max_tokens: 5, messages: [{ role: 'user', content: 'a'.repeat(3.5 * MiB) }] });
  const answer = await post(gzipSync(body), { 'content-encoding': 'gzip' });
  expect(answer.status).toBe(413);
  expect(await answer.text()).toContain(`the limit is ${3 * MiB} bytes`);
});

test('decoded bytes count against the in-flight budget: small compressed bodies that decode large get 503 together, and all fit one by one', async () => {
  // Each: 1 MiB decoded from about 5 KB, and twice as much for its parse (3 MiB in all); two at
  // once pass the 4 MiB budget (counting the compressed bytes only, all four would fit in 20 KB).
  const body = gzipSync(JSON.stringify({ model: 'slow-a', max_tokens: 5, messages: [{ role: 'user', content: 'a'.repeat(MiB) }] }));
  expect(body.length).toBeLessThan(20_000);
  const statuses = await Promise.all(Array.from({ length: 4 }, () => post(body, { 'content-encoding': 'gzip' }).then(async (answer) => (await answer.arrayBuffer(), answer.status))));
  // Which of them pass depends on how their decoding interleaves (on a loaded machine none may):
  // what holds is that not all four fit at once, and each fits alone.
  expect(statuses).toContain(503);
  expect(statuses.filter((status) => status !== 200 && status !== 503)).toEqual([]);
  // An invocation gives its bytes back when it ends, a moment after its answer.
  const settled = () => until(() => gateway.server.inFlight === 0);
  for (let i = 0; i < 2; i++) {
    expect(await settled()).toBe(true);
    expect((await post(body, { 'content-encoding': 'gzip' })).status).toBe(200);
  }
  expect(await settled()).toBe(true);
});

test(`a body of more than ${MAX_JSON_VALUES} JSON values is a 413 before it is parsed`, async () => {
  const wide = `{"model":"sim-a","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"metadata":{"pad":[${'{},'.repeat(MAX_JSON_VALUES)}{}]}}`;
  const answer = await post(wide);
  expect(answer.status).toBe(413);
  expect(await answer.text()).toContain(`more than ${MAX_JSON_VALUES} JSON values`);
});

test('a route whose preflight names a small unauthenticated allowance reads that much, from a budget of its own', async () => {
  const handler = (async (event, stream, context) => {
    const refusal = (context as { refusal?: { status: number } }).refusal;
    stream.write(refusal ? `refused ${refusal.status}` : `got ${event.body?.length ?? 0}`);
    stream.end();
  }) as StreamingHandler;
  handler.preflight = async () => ({ authenticated: false, maxBodyBytes: 16 });
  const server = createFunctionUrlServer(handler, { maxBodyBytes: MiB, functionTimeoutMs: 10_000 });
  const url = await listen(server);
  try {
    const form = await fetch(`${url}/sign-in`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'user=a&pass=b' });
    expect(await form.text()).toBe('got 13');
    const large = await fetch(`${url}/sign-in`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(17) });
    expect(await large.text()).toBe('refused 413');
    // Unauthenticated bodies together hold at most 1 MiB: this route's 16 bytes, many times over, fit.
    const many = await Promise.all(Array.from({ length: 20 }, () => fetch(`${url}/sign-in`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(16) }).then((answer) => answer.text())));
    expect(new Set(many)).toEqual(new Set(['got 16']));
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
