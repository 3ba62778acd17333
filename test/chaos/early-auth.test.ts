import { ChaosGateway } from './support/gateway.ts';
import { expectBelow, sampleRss } from './support/measure.ts';
import { requestHead } from './support/raw-http.ts';
import { expectError, type Family } from './support/requests.ts';

/**
 * Issue "Hardening", item 2: the key is checked on the request head, before a body byte is read.
 * Today the whole body is buffered first, so anyone who can reach the port can make the server
 * hold 32 MB per connection without a key.
 */
let gateway: ChaosGateway;

beforeAll(async () => {
  gateway = await ChaosGateway.start({ config: { upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }] } });
});

afterAll(() => gateway?.stop());

beforeEach(() => gateway.ensureRunning());

const THIRTY_MB = 30_000_000;

describe('2. headers are authenticated before the body is read', () => {
  test.each([
    ['/first/v1/messages', 'missing', 'messages'],
    ['/first/v1/messages', 'bad', 'messages'],
    ['/second/v1/responses', 'missing', 'responses'],
    ['/second/v1/responses', 'bad', 'responses'],
  ] as const)('%s with a %s key and content-length 30000000 gets its 401 without sending a body byte', async (path, key, family) => {
    const connection = await gateway.connect();
    const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': THIRTY_MB };
    if (key === 'bad') headers.authorization = 'Bearer gwk_notAKeyThisGatewayIssuedxxxxxxxxxxxxxxxxxx';
    await connection.write(requestHead('POST', path, headers));
    const answer = await connection.response(5_000);
    expectError(answer, family as Family, 401, family === 'messages' ? 'authentication_error' : undefined);
    // The rest of the body will not be read: the connection is closed after the answer.
    expect(await connection.closesWithin(5_000)).toBe(true);
    connection.destroy();
    await gateway.probe();
  });

  test('20 concurrent unauthenticated 30 MB uploads keep the RSS within 150 MB of idle', async () => {
    await gateway.probe('before the uploads');
    const idle = gateway.rssMb();
    const rss = sampleRss(gateway);
    let sent: number[];
    try {
      sent = await Promise.all(Array.from({ length: 20 }, (_, index) => upload(index % 2 === 0 ? '/first/v1/messages' : '/second/v1/responses')));
    } finally {
      rss.stop();
    }
    gateway.assertAlive('after 20 unauthenticated 30 MB uploads');
    const sentMb = Math.round(sent.reduce((sum, bytes) => sum + bytes, 0) / 1e6);
    expectBelow(rss.peakMb - idle, 150, `RSS growth in MB (idle ${Math.round(idle)} MB, peak ${Math.round(rss.peakMb)} MB, ${sentMb} MB sent by the clients)`);
    await gateway.probe('after 20 unauthenticated 30 MB uploads');
  });
});

/** Sends a 30 MB body without a key as fast as the server takes it; returns the bytes it got to send. */
async function upload(path: string): Promise<number> {
  const connection = await gateway.connect();
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  await connection.write(requestHead('POST', path, { 'content-type': 'application/json', 'content-length': THIRTY_MB }));
  let sent = 0;
  while (sent < THIRTY_MB && !connection.isClosed) {
    const piece = sent + chunk.length > THIRTY_MB ? chunk.subarray(0, THIRTY_MB - sent) : chunk;
    if (!(await connection.write(piece))) break;
    sent += piece.length;
  }
  // Whatever the server answers, the connection must end (it is not kept for a body nobody reads).
  await connection.closesWithin(10_000);
  connection.destroy();
  return sent;
}
