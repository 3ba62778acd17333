import { ChaosGateway } from './support/gateway.ts';
import { requestHead, type RawConnection } from './support/raw-http.ts';
import { expectError, messagesBody, responsesBody, type Family } from './support/requests.ts';

/**
 * Issue "Hardening", item 3: slow clients are cut off. Today a head sent one byte a second holds a
 * connection for 60-90 s, and a body that stops arriving holds it (and its buffer) for good. The
 * settings are small here so the test is quick.
 */
const HEADERS_TIMEOUT_MS = 2_000;
const BODY_IDLE_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 4_000;
const MAX_INFLIGHT_BODY_BYTES = 1_000_000;

let gateway: ChaosGateway;

beforeAll(async () => {
  gateway = await ChaosGateway.start({
    config: { upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }] },
    env: {
      GATEWAY_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      GATEWAY_BODY_IDLE_TIMEOUT_MS: String(BODY_IDLE_TIMEOUT_MS),
      GATEWAY_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      GATEWAY_MAX_INFLIGHT_BODY_BYTES: String(MAX_INFLIGHT_BODY_BYTES),
    },
  });
});

afterAll(() => gateway?.stop());

beforeEach(() => gateway.ensureRunning());

const PATHS: Record<Family, string> = { messages: '/first/v1/messages', responses: '/second/v1/responses' };

function upload(family: Family, length: number): { head: string; body: string } {
  const body = JSON.stringify(family === 'messages' ? messagesBody('sim-upload', 'x'.repeat(length)) : responsesBody('sim-upload', 'x'.repeat(length)));
  return { head: requestHead('POST', PATHS[family], { authorization: `Bearer ${gateway.key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }), body };
}

/** Writes `text` one byte every `gapMs` until it is all sent or the server closes the connection. */
async function trickle(connection: RawConnection, text: string, gapMs: number): Promise<void> {
  for (const byte of text) {
    if (connection.isClosed || !(await connection.write(byte))) return;
    await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
}

describe('3. slow clients', () => {
  test(`a head sent one byte per second is cut at the headers timeout (${HEADERS_TIMEOUT_MS} ms): 408, connection closed`, async () => {
    const connection = await gateway.connect();
    const started = Date.now();
    const head = requestHead('POST', '/first/v1/messages', { authorization: `Bearer ${gateway.key}`, 'content-type': 'application/json', 'content-length': 2, 'x-padding': 'p'.repeat(40) });
    void trickle(connection, head, 1_000);
    // Generous: the timeout plus Node's check interval plus slack, far below the 60-90 s of today.
    if (!(await connection.closesWithin(HEADERS_TIMEOUT_MS + 6_000))) {
      connection.destroy();
      throw new Error(`the connection was still open ${Date.now() - started} ms into a head sent at one byte a second; the server sent ${connection.received.length} bytes`);
    }
    expect((await connection.response(100)).status).toBe(408);
    await gateway.probe('after a slow head');
  });

  test.each(['messages', 'responses'] as const)(`a body that stops arriving for the body idle timeout (${BODY_IDLE_TIMEOUT_MS} ms) gets 408 in the %s format, logged request_timeout`, async (family) => {
    const { head, body } = upload(family, 5_000);
    const mark = gateway.mark();
    const connection = await gateway.connect();
    await connection.write(head + body.slice(0, 100));
    const answer = await connection.response(BODY_IDLE_TIMEOUT_MS + 5_000);
    expectError(answer, family, 408);
    const line = await gateway.nextLine(mark);
    expect(line).toMatchObject({ status: 408, outcome: 'request_timeout' });
    expect(await connection.closesWithin(5_000)).toBe(true);
    await gateway.probe('after a body stopped arriving');
  });

  test(`an upload that is still arriving after the request timeout (${REQUEST_TIMEOUT_MS} ms) gets 408`, async () => {
    const { head, body } = upload('messages', 5_000);
    const connection = await gateway.connect();
    await connection.write(head);
    // A byte every 300 ms: never idle for the body idle timeout, but never done either.
    void trickle(connection, body, 300);
    const answer = await connection.response(REQUEST_TIMEOUT_MS + 6_000).finally(() => connection.destroy());
    expect(answer.status).toBe(408);
    await gateway.probe('after a request that took too long to upload');
  });

  test(`bodies over the in-flight cap (${MAX_INFLIGHT_BODY_BYTES} bytes being received at once) get 503 in their format with retry-after, logged overloaded`, async () => {
    // One upload holds 800 KB of the cap (what it has sent: the cap counts bytes as they arrive,
    // never as announced), kept alive a byte at a time (never idle).
    const first = upload('messages', 850_000);
    const holder = await gateway.connect();
    await holder.write(first.head + first.body.slice(0, 800_000));
    const keepAlive = trickle(holder, first.body.slice(800_000, 800_030), 200);
    // Nothing tells the client that the server has taken the head in: a short pause stands for that.
    await new Promise((resolve) => setTimeout(resolve, 200));
    try {
      for (const family of ['messages', 'responses'] as const) {
        const second = upload(family, 800_000);
        const mark = gateway.mark();
        const connection = await gateway.connect();
        await connection.write(second.head + second.body.slice(0, 300_000));
        const answer = await connection.response(5_000).finally(() => connection.destroy());
        expectError(answer, family, 503);
        expect(answer.headers['retry-after']).toMatch(/^\d+$/);
        expect(await gateway.nextLine(mark)).toMatchObject({ status: 503, outcome: 'overloaded' });
      }
    } finally {
      holder.destroy();
      await keepAlive;
    }
    await gateway.probe('after uploads over the in-flight cap');
  });
});
