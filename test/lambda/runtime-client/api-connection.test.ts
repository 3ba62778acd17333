import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { RuntimeApiConnection } from '../../../lambda/runtime-client/api-connection.ts';
import { until } from '../../support/processes.ts';

/**
 * RuntimeApiConnection against a real loopback server that writes raw HTTP bytes, so the test
 * decides where the answer's TCP writes are cut.
 */
const NEXT = 'GET /2018-06-01/runtime/invocation/next HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
const bytes = (text: string) => Buffer.from(text, 'latin1');
const sized = (body: string) => bytes(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`);

let server: net.Server;
let api: RuntimeApiConnection;
/** Every connection the server accepted, and every request head it read (with the socket it came on). */
let peers: net.Socket[];
let requests: { peer: net.Socket; head: string }[];

beforeEach(async () => {
  peers = [];
  requests = [];
  server = net.createServer((peer) => {
    peers.push(peer);
    peer.setNoDelay(true);
    peer.on('error', () => {});
    let pending = '';
    peer.on('data', (chunk: Buffer) => {
      pending += chunk.toString('latin1');
      for (let end = pending.indexOf('\r\n\r\n'); end >= 0; end = pending.indexOf('\r\n\r\n')) {
        requests.push({ peer, head: pending.slice(0, end) });
        pending = pending.slice(end + 4);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api = new RuntimeApiConnection(`127.0.0.1:${(server.address() as net.AddressInfo).port}`);
});

afterEach(async () => {
  api.close();
  for (const peer of peers) peer.destroy();
  await new Promise((resolve) => server.close(resolve));
});

/** The socket the n-th request arrived on, once it has. */
const requestAt = (n: number) => until(() => requests[n]?.peer, `request ${n}`);

/**
 * Writes the pieces one by one, each only once the client has read everything before it: the
 * client then sees every cut, however the kernel would have merged the writes.
 */
async function sendInPieces(peer: net.Socket, pieces: Buffer[]): Promise<void> {
  const client = await api.socket();
  let sent = client.bytesRead;
  for (const piece of pieces) {
    peer.write(piece);
    sent += piece.length;
    // A client that dropped the connection (a refused answer) reads no further.
    await until(() => client.bytesRead >= sent || client.destroyed, `the client to read ${sent} bytes`);
  }
}

/** The bytes cut at the given offsets. */
const cut = (data: Buffer, ...at: number[]) => [0, ...at].map((from, i) => data.subarray(from, at[i] ?? data.length));

test('a Content-Length answer cut mid-line in the head and in the body comes back whole, header names lower-cased', async () => {
  const answer = bytes('HTTP/1.1 200 OK\r\nLambda-Runtime-Aws-Request-Id: req-1\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"a":"bcd"}');
  const pending = api.exchange(NEXT);
  const peer = await requestAt(0);
  // Cuts: inside the status line, inside a header name, inside the body.
  await sendInPieces(peer, cut(answer, 5, 25, answer.length - 6));
  expect(await pending).toEqual({
    status: 200,
    headers: { 'lambda-runtime-aws-request-id': 'req-1', 'content-type': 'application/json', 'content-length': '11' },
    body: bytes('{"a":"bcd"}'),
  });
});

test.each([
  ['without trailers', ''],
  ['with trailers', 'X-Checksum: abc\r\nX-Other: 1\r\n'],
])('a chunked answer %s is joined, and the answer sent in the same write right after it is kept for the next answer()', async (_, trailers) => {
  const chunked = bytes(`HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1;ext=1\r\n,\r\n6\r\n world\r\n0\r\n${trailers}\r\n`);
  const after = sized('next one');
  const pending = api.exchange(NEXT);
  const peer = await requestAt(0);
  // Cuts inside a chunk's size line and inside a chunk's data; the last write holds the end of
  // the chunked answer and the whole next answer.
  await sendInPieces(peer, cut(Buffer.concat([chunked, after]), chunked.indexOf('1;ext') + 2, chunked.indexOf('world') + 2));
  const first = await pending;
  expect(first.status).toBe(202);
  expect(first.body.toString('latin1')).toBe('hello, world');
  const second = await api.answer();
  expect(second.status).toBe(200);
  expect(second.body.toString('latin1')).toBe('next one');
});

test('two exchanges one after the other use one TCP connection', async () => {
  for (const n of [0, 1]) {
    const pending = api.exchange(NEXT);
    (await requestAt(n)).write(sized(`answer ${n}`));
    expect((await pending).body.toString('latin1')).toBe(`answer ${n}`);
  }
  expect(peers).toHaveLength(1);
  expect(requests[1]?.peer).toBe(requests[0]?.peer);
});

test('the server closing before the answer is complete rejects the exchange; the next exchange opens a new connection and succeeds', async () => {
  const pending = api.exchange(NEXT);
  // A head promising ten bytes, three of them sent, then the close.
  (await requestAt(0)).end(bytes('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc'));
  await expect(pending).rejects.toThrow('the Runtime API closed the connection');

  const again = api.exchange(NEXT);
  (await requestAt(1)).write(sized('fresh'));
  expect((await again).body.toString('latin1')).toBe('fresh');
  expect(peers).toHaveLength(2);
});

test('the server closing before any answer byte rejects the exchange, and a later answer() rejects too, rather than waiting forever', async () => {
  const pending = api.exchange(NEXT);
  (await requestAt(0)).destroy();
  await expect(pending).rejects.toThrow('the Runtime API closed the connection');
  await expect(api.answer()).rejects.toThrow('the Runtime API closed the connection');
});

test.each([
  ['a status line that is not HTTP/1.x', bytes('HTTP/2 200\r\ncontent-length: 0\r\n\r\n')],
  ['a status line without a status code', bytes('HTTP/1.1 OK\r\ncontent-length: 0\r\n\r\n')],
  ['a head over 64 KiB that never ends', bytes(`HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(65 * 1024)}\r\n`)],
])('%s is refused with "the Runtime API sent …" and the connection dropped', async (_, answer) => {
  // The rejection may come while pieces are still being sent: its expectation is attached first.
  const refused = expect(api.exchange(NEXT)).rejects.toThrow(/^the Runtime API sent /);
  const peer = await requestAt(0);
  await sendInPieces(peer, cut(answer, 20));
  await refused;
  // Bounded: the client must let the connection go, not keep reading a broken stream.
  await until(() => peer.destroyed, 'the server to see the connection dropped');
});

test('a 6 MiB Content-Length body sent in 64 KiB writes arrives byte for byte', async () => {
  const body = randomBytes(6 * 1024 * 1024);
  const answer = Buffer.concat([bytes(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`), body]);
  const pending = api.exchange(NEXT);
  const peer = await requestAt(0);
  const pieces: Buffer[] = [];
  for (let at = 0; at < answer.length; at += 64 * 1024) pieces.push(answer.subarray(at, at + 64 * 1024));
  await sendInPieces(peer, pieces);
  const received = await pending;
  expect(received.body.length).toBe(body.length);
  expect(received.body.equals(body)).toBe(true);
});

test('after a refused answer, the next exchange succeeds on a new connection: the dropped socket\'s late close does not touch it', async () => {
  const refused = expect(api.exchange(NEXT)).rejects.toThrow(/^the Runtime API sent /);
  (await requestAt(0)).write(bytes('garbage\r\n\r\n'));
  await refused;
  // At once, as the runtime client asks for its next invocation: the old socket closes meanwhile.
  for (const n of [1, 2, 3]) {
    const pending = api.exchange(NEXT);
    (await requestAt(n)).write(sized(`answer ${n}`));
    expect((await pending).body.toString('latin1')).toBe(`answer ${n}`);
  }
  expect(peers).toHaveLength(2);
});

test('an answer saying Connection: close makes the next exchange open a new connection, the old one dropped', async () => {
  const first = api.exchange(NEXT);
  const peer = await requestAt(0);
  peer.write(bytes('HTTP/1.1 202 Accepted\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok'));
  expect((await first).status).toBe(202);
  const second = api.exchange(NEXT);
  (await requestAt(1)).write(sized('fresh'));
  expect((await second).body.toString('latin1')).toBe('fresh');
  expect(requests[1]?.peer).not.toBe(peer);
  await until(() => peer.readableEnded || peer.destroyed, 'the client to drop the first connection');
});

test('a head over 64 KiB is refused even when it ends', async () => {
  const refused = expect(api.exchange(NEXT)).rejects.toThrow('the Runtime API sent an answer head over 64 KiB');
  (await requestAt(0)).write(bytes(`HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(65 * 1024)}\r\nContent-Length: 0\r\n\r\n`));
  await refused;
});

test('the constructor refuses an address without a port, or with one that is not a port', () => {
  expect(() => new RuntimeApiConnection('localhost')).toThrow('AWS_LAMBDA_RUNTIME_API is not host:port: localhost');
  expect(() => new RuntimeApiConnection(':9001')).toThrow(/not host:port/);
  for (const address of ['127.0.0.1:', 'host:abc', 'host:0', 'host:70000', 'host:9001x']) expect(() => new RuntimeApiConnection(address)).toThrow(/not host:port/);
  expect(new RuntimeApiConnection('127.0.0.1:9001').address).toBe('127.0.0.1:9001');
});
