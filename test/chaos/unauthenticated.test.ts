import net from 'node:net';
import { ChaosGateway } from './support/gateway.ts';
import { expectBelow, sampleRss } from './support/measure.ts';
import { requestHead, type RawConnection } from './support/raw-http.ts';
import { expectStatus, jsonHeaders, send } from './support/requests.ts';

/**
 * Issue 19, item 1: no unauthenticated request holds memory or body budget beyond a small fixed
 * allowance. Today eight keyless connections to the probe route announcing 32 MiB each and
 * trickling a byte make every keyed request with a body answer 503, and a stranger's idle
 * connections are bounded only by the file descriptor limit.
 */
let gateway: ChaosGateway;

beforeAll(async () => {
  gateway = await ChaosGateway.start({ config: { upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }] } });
});

afterAll(() => gateway?.stop());

beforeEach(() => gateway.ensureRunning());

const ANNOUNCED = 33_554_432;
/** Requests to the routes that need no key, each announcing a 32 MiB body. */
const OPEN_HEADS = [
  requestHead('GET', '/first/api/hello', { 'content-length': ANNOUNCED }),
  requestHead('HEAD', '/first', { 'content-length': ANNOUNCED }),
  requestHead('GET', '/second/v1', { 'content-length': ANNOUNCED }),
  requestHead('GET', '/second/v1/responses', { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', 'content-length': ANNOUNCED }),
];

/** A keyed request with a 1 MB body. */
function keyedUpload(): Promise<{ status: number; text: string }> {
  const body = JSON.stringify({ model: 'sim-keyed', max_tokens: 8, messages: [{ role: 'user', content: 'x'.repeat(1_000_000) }] });
  return send(gateway.url, '/first/v1/messages', { headers: jsonHeaders(gateway.key), body });
}

describe('1. unauthenticated requests hold no body budget', () => {
  test('eight keyless 32 MiB announcements to the open routes, trickling a byte a second: each is answered at once and closed, keyed uploads are served throughout', async () => {
    const attackers: RawConnection[] = [];
    for (let i = 0; i < 8; i++) {
      const connection = await gateway.connect();
      await connection.write(`${OPEN_HEADS[i % OPEN_HEADS.length]}{`);
      attackers.push(connection);
    }
    const trickle = setInterval(() => {
      for (const connection of attackers) if (!connection.isClosed) void connection.write('x');
    }, 1_000);
    try {
      // Answered from the head, without waiting for a body byte.
      for (const connection of attackers) expect((await connection.head(2_000)).status).toBeLessThan(500);
      for (let round = 0; round < 3; round++) {
        const answer = await keyedUpload();
        expectStatus(answer, 200, `a keyed 1 MB upload while eight keyless connections announce 32 MiB each (round ${round + 1})`);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
      // Their bodies are not read: the connections are closed shortly after the answer.
      for (const connection of attackers) expect(await connection.closesWithin(3_000)).toBe(true);
    } finally {
      clearInterval(trickle);
      for (const connection of attackers) connection.destroy();
    }
    await gateway.probe('after the keyless announcements');
  });

  test('1,000 connections that never send a head: a keyed client is served, at most 256 stay open, memory barely moves', async () => {
    await gateway.probe('before the idle connections');
    const idle = gateway.rssMb();
    const rss = sampleRss(gateway);
    const sockets: net.Socket[] = [];
    let open = 0;
    try {
      const { hostname, port } = new URL(gateway.url);
      for (let i = 0; i < 1_000; i++) {
        const socket = net.connect(Number(port), hostname);
        socket.on('error', () => {});
        socket.on('connect', () => open++);
        socket.on('close', () => open--);
        sockets.push(socket);
      }
      await gateway.waitFor(() => sockets.every((socket) => socket.readyState !== 'opening'), 'the connections to be made', 10_000);
      expectStatus(await keyedUpload(), 200, 'a keyed upload next to 1,000 idle keyless connections');
      // The server closes the oldest beyond its cap (GATEWAY_MAX_UNAUTHENTICATED_CONNECTIONS, 256).
      await gateway.waitFor(() => open <= 256, `at most 256 idle connections left open (${open} are)`, 5_000);
    } finally {
      rss.stop();
      for (const socket of sockets) socket.destroy();
    }
    expectBelow(rss.peakMb - idle, 50, `RSS growth in MB with 1,000 idle keyless connections (idle ${Math.round(idle)} MB)`);
    await gateway.probe('after the idle connections');
  });
});
