import http from 'node:http';
import net from 'node:net';
import { BodyBudget, readRequestBody, type BodyResult } from '../../../bin/local/request-body.ts';
import { listen } from '../../support/gateway-harness.ts';
import { eventually } from '../../support/processes.ts';

/** A real server whose handler reads each body with the given limits and reports the result. */
async function bodyServer(limits: { maxBodyBytes: number; idleTimeoutMs: number; budget: BodyBudget }) {
  const results: BodyResult[] = [];
  const waiting: ((result: BodyResult) => void)[] = [];
  const server = http.createServer(async (req, res) => {
    const result = await readRequestBody(req, limits);
    results.push(result);
    waiting.shift()?.(result);
    limits.budget.give(result.held);
    res.end(result.kind);
  });
  const url = new URL(await listen(server));
  return {
    port: Number(url.port),
    next: () => new Promise<BodyResult>((resolve) => waiting.push(resolve)),
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))),
  };
}

function send(port: number, text: string): net.Socket {
  const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
  socket.on('error', () => {});
  return socket;
}

const head = (length: number | 'chunked') =>
  `POST /x HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${length === 'chunked' ? 'transfer-encoding: chunked' : `content-length: ${length}`}\r\n\r\n`;

test('a body within the limits is read whole, and what it held goes back to the budget', async () => {
  const budget = new BodyBudget(1_000);
  const server = await bodyServer({ maxBodyBytes: 100, idleTimeoutMs: 5_000, budget });
  const result = server.next();
  send(server.port, `${head(11)}{"a":"bcd"}`);
  expect(await result).toMatchObject({ kind: 'body', held: 11 });
  expect(((await result) as { body: Buffer }).body.toString()).toBe('{"a":"bcd"}');
  await server.close();
  expect(budget.used).toBe(0);
});

test('an announced length over the limit is refused before a byte is read, with the true size', async () => {
  const server = await bodyServer({ maxBodyBytes: 100, idleTimeoutMs: 5_000, budget: new BodyBudget(1_000) });
  const result = server.next();
  send(server.port, head(30_000_000));
  expect(await result).toMatchObject({ kind: 'refused', error: { status: 413, message: 'Request body is 30000000 bytes; the limit is 100 bytes.' } });
  await server.close();
});

test('a chunked body is refused as soon as it passes the limit', async () => {
  const server = await bodyServer({ maxBodyBytes: 100, idleTimeoutMs: 5_000, budget: new BodyBudget(1_000) });
  const result = server.next();
  const chunk = 'x'.repeat(60);
  send(server.port, `${head('chunked')}3c\r\n${chunk}\r\n3c\r\n${chunk}\r\n`);
  expect(await result).toMatchObject({ kind: 'refused', error: { status: 413, message: 'Request body is larger than 100 bytes; the limit is 100 bytes.' } });
  await server.close();
});

test('bodies beyond the in-flight budget get 503 with retry-after, and fit again once the budget is free', async () => {
  const budget = new BodyBudget(150);
  const server = await bodyServer({ maxBodyBytes: 1_000, idleTimeoutMs: 5_000, budget });
  // Results arrive in the order reading ends: the refusal first, the slow upload when it leaves.
  const refusal = server.next();
  const slow = send(server.port, `${head(200)}${'y'.repeat(100)}`);
  // The server has taken in what was sent (the budget holds it): a loaded machine may take longer than any fixed pause.
  await eventually(() => expect(budget.used).toBe(100), 5_000);
  send(server.port, `${head(100)}${'x'.repeat(100)}`);
  expect(await refusal).toMatchObject({ kind: 'refused', error: { status: 503, kind: 'overloaded', headers: { 'retry-after': '1' } } });
  expect(budget.used).toBe(100);
  const gone = server.next();
  slow.destroy();
  expect(await gone).toMatchObject({ kind: 'gone' });
  await new Promise((resolve) => setImmediate(resolve));
  expect(budget.used).toBe(0);
  await server.close();
});

test('a body that stops arriving is a 408 after the idle timeout', async () => {
  const server = await bodyServer({ maxBodyBytes: 1_000, idleTimeoutMs: 200, budget: new BodyBudget(10_000) });
  const result = server.next();
  const started = Date.now();
  send(server.port, `${head(50)}{"partial":`);
  expect(await result).toMatchObject({ kind: 'refused', error: { status: 408, kind: 'request_timeout' } });
  expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  await server.close();
});

test.each([
  ['reset', (socket: net.Socket) => socket.resetAndDestroy()],
  ['close', (socket: net.Socket) => socket.destroy()],
])('a client that leaves mid-upload (%s) resolves as gone, never as an exception', async (_how, leave) => {
  const budget = new BodyBudget(10_000);
  const server = await bodyServer({ maxBodyBytes: 1_000, idleTimeoutMs: 5_000, budget });
  const result = server.next();
  const socket = send(server.port, `${head(500)}{"model":`);
  await eventually(() => expect(budget.used).toBe('{"model":'.length), 5_000);
  leave(socket);
  // What arrived, not what was announced.
  expect(await result).toMatchObject({ kind: 'gone', held: '{"model":'.length });
  await server.close();
});

test('an announced length holds nothing of the budget until its bytes arrive', async () => {
  const budget = new BodyBudget(150);
  const server = await bodyServer({ maxBodyBytes: 1_000, idleTimeoutMs: 5_000, budget });
  // Eight uploads announcing 100 bytes each, one byte sent: eight bytes held, not 800.
  const trickles = Array.from({ length: 8 }, () => send(server.port, `${head(100)}{`));
  await eventually(() => expect(budget.used).toBeGreaterThanOrEqual(8), 5_000);
  expect(budget.used).toBe(8);
  const result = server.next();
  send(server.port, `${head(100)}${'x'.repeat(100)}`);
  expect(await result).toMatchObject({ kind: 'body', held: 100 });
  for (const trickle of trickles) trickle.destroy();
  await server.close();
});
