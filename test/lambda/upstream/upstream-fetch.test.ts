import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type net from 'node:net';
import tls from 'node:tls';
import { startLoopbackTls } from '../../../bench/lambda/loopback-tls.ts';
import { bodyReaderOf, hasBody } from '../../../lambda/upstream/light-response.ts';
import type { ChunkReader } from '../../../lambda/upstream/relay.ts';
import { closeIdleUpstreamSockets, preconnectUpstream, upstreamFetch as fetchImpl } from '../../../lambda/upstream/upstream-fetch.ts';
import { closeTestServers, socketClosed as closed, startCountingServer as startServer, startRawServer } from '../../support/test-http-servers.ts';

/**
 * The upstream HTTP client's specification: everything the gateway relies on from the `fetch` it
 * calls its upstreams with, against real loopback servers. Written against the node:http client
 * this one replaced (nodeHttpFetch, removed with it) and passed by both, but for where noted.
 */

/** Nothing here may hang: a client that never settles fails its test in this time. */
const FEW_SECONDS = 5_000;

/** A promise the test opens: lets a server write its next piece only after the test saw the last. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const post = (body: string | Uint8Array = '', headers: Record<string, string> = {}): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
const text = (value: Uint8Array | undefined) => Buffer.from(value ?? []).toString();
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const event = (i: number) => `event: delta\ndata: {"i":${i}}\n\n`;
const readerOf = (response: Response) => bodyReaderOf(response) as ChunkReader;

async function readAll(reader: ChunkReader): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for (let result = await reader.read(); !result.done; result = await reader.read()) chunks.push(result.value);
  return Buffer.concat(chunks);
}

describe('upstreamFetch', () => {
  afterEach(async () => {
    closeIdleUpstreamSockets();
    await closeTestServers();
  });
  const answerText = async (url: string, body = '') => (await fetchImpl(url, post(body))).text();

  test('a string body: the server sees method, path and query, headers, host, length and body as sent; status, statusText and headers arrive', async () => {
    const server = await startServer((_req, res) => {
      res.setHeader('x-multi', ['one', 'two']);
      res.writeHead(201, 'Made It', { 'content-type': 'application/json' }).end('{"made":"é"}');
    });
    const body = JSON.stringify({ model: 'm', text: 'é€😀' });
    const response = await fetchImpl(`${server.url}/v1/messages?beta=true&x=1`, post(body, { 'x-api-key': 'sk-test', 'anthropic-version': '2023-06-01' }));
    const received = server.seen.requests[0] as (typeof server.seen.requests)[0];
    expect(received).toMatchObject({ method: 'POST', url: '/v1/messages?beta=true&x=1' });
    expect(received.headers).toMatchObject({ 'content-type': 'application/json', 'x-api-key': 'sk-test', 'anthropic-version': '2023-06-01', host: new URL(server.url).host, 'content-length': String(Buffer.byteLength(body)) });
    expect(received.headers['transfer-encoding']).toBeUndefined();
    expect(received.body.toString()).toBe(body);
    expect([response.status, response.statusText, response.ok]).toEqual([201, 'Made It', true]);
    expect(response.headers.get('X-MULTI')).toBe('one, two');
    expect(response.headers.get('Content-Type')).toBe('application/json');
    expect(await response.json()).toEqual({ made: 'é' });
  }, FEW_SECONDS);

  test('a Uint8Array body arrives byte for byte with its length; arrayBuffer() gives the answer back whole', async () => {
    const server = await startServer((_req, res, body) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(body));
    const bytes = Uint8Array.from({ length: 512 }, (_, i) => i % 256);
    const response = await fetchImpl(server.url, post(bytes));
    expect(server.seen.requests[0]?.headers['content-length']).toBe('512');
    expect(Buffer.compare(server.seen.requests[0]?.body as Buffer, bytes)).toBe(0);
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(bytes);
  }, FEW_SECONDS);

  test('keep-alive: twenty sequential calls ride one connection', async () => {
    const server = await startServer((_req, res, body) => res.writeHead(200).end(`answer to ${body}`));
    for (let i = 0; i < 20; i++) expect(await (await fetchImpl(server.url, post(String(i)))).text()).toBe(`answer to ${i}`);
    expect(server.seen.connections).toBe(1);
  }, FEW_SECONDS);

  test('an idle connection the server closed is not used again, nor one whose answer said Connection: close', async () => {
    const server = await startServer((_req, res, body) => res.writeHead(200, body.toString() === 'close' ? { connection: 'close' } : {}).end('ok'));
    expect(await answerText(server.url)).toBe('ok');
    await server.closeIdleConnections();
    for (const body of ['close', 'after']) expect(await answerText(server.url, body)).toBe('ok');
    expect(server.seen.connections).toBe(3);
  }, FEW_SECONDS);

  test('bytes after a complete answer that nobody asked for: the answer is taken, the socket never carries another call', async () => {
    const ok = (body: string) => `HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
    const sockets = new Set<net.Socket>();
    // A desynchronised socket would hand one caller's answer to the next caller.
    const raw = await startRawServer((socket, index) => {
      sockets.add(socket);
      socket.write(index === 0 ? ok('first') + ok('stray') : ok('second'));
    });
    expect(await answerText(raw.url)).toBe('first');
    await sleep(20);
    expect(await answerText(raw.url)).toBe('second');
    expect(sockets.size).toBe(2);
  }, FEW_SECONDS);

  test('40 concurrent calls, each held by the server until all 40 arrived, are all served at once (none queued)', async () => {
    const held: [import('node:http').ServerResponse, Buffer][] = [];
    const server = await startServer((_req, res, body) => {
      held.push([res, body]);
      if (held.length === 40) for (const [waiting, itsBody] of held) waiting.writeHead(200).end(itsBody);
    });
    const calls = Array.from({ length: 40 }, (_, i) => fetchImpl(server.url, post(`call ${i}`)).then((response) => response.text()));
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 40 }, (_, i) => `call ${i}`));
    expect(server.seen.mostOpen).toBe(40);
  }, FEW_SECONDS);

  test.each([
    ['bodyReaderOf(response)', readerOf],
    ['the body web stream', (response: Response) => (response.body as ReadableStream<Uint8Array>).getReader()],
  ])('a chunked SSE answer through %s: each event is read before the server writes the next', async (_how, take) => {
    const turns = Array.from({ length: 3 }, gate);
    const server = await startServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const [i, turn] of turns.entries()) {
        res.write(event(i));
        await turn.opened;
      }
      res.end();
    });
    const response = await fetchImpl(server.url, post());
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    const reader = take(response);
    for (const [i, turn] of turns.entries()) {
      expect(text((await reader.read()).value)).toBe(event(i));
      turn.open();
    }
    expect(await reader.read()).toEqual({ done: true, value: undefined });
  }, FEW_SECONDS);

  test('a Content-Length answer read in pieces ends at its length, and its connection carries the next call', async () => {
    const turns = [gate(), gate()];
    const server = await startServer(async (_req, res, body) => {
      if (body.toString() === 'again') return res.writeHead(200).end('again');
      res.writeHead(200, { 'content-length': '12' }).write('aaaa');
      await turns[0]?.opened;
      res.write('bbbb');
      await turns[1]?.opened;
      res.end('cccc');
    });
    const reader = readerOf(await fetchImpl(server.url, post()));
    const pieces: string[] = [];
    for (const turn of [...turns, undefined]) {
      pieces.push(text((await reader.read()).value));
      turn?.open();
    }
    expect(pieces).toEqual(['aaaa', 'bbbb', 'cccc']);
    expect((await reader.read()).done).toBe(true);
    expect(await answerText(server.url, 'again')).toBe('again');
    expect(server.seen.connections).toBe(1);
  }, FEW_SECONDS);

  test('an answer framed by the close only (HTTP/1.1, Connection: close, no length) ends when the server closes', async () => {
    const turn = gate();
    const raw = await startRawServer(async (socket) => {
      socket.write('HTTP/1.1 200 OK\r\nConnection: close\r\ncontent-type: text/plain\r\n\r\nfirst ');
      await turn.opened;
      socket.end('last');
    });
    const reader = readerOf(await fetchImpl(raw.url, post()));
    expect(text((await reader.read()).value)).toBe('first ');
    turn.open();
    expect((await readAll(reader)).toString()).toBe('last');
  }, FEW_SECONDS);

  test('connection refused, a close before any answer, an answer that is not HTTP: fetch rejects', async () => {
    const gone = await startRawServer(() => {});
    await gone.close();
    await expect(fetchImpl(gone.url, post())).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    const raw = await startRawServer((socket, index) => (index === 0 ? socket.end() : socket.write('SSH-2.0-nope\r\n\r\n')));
    await expect(fetchImpl(raw.url, post())).rejects.toThrow();
    await expect(fetchImpl(raw.url, post())).rejects.toThrow();
  }, FEW_SECONDS);

  test.each([
    ['chunked', 'transfer-encoding: chunked\r\n\r\n5\r\nhello\r\n'],
    ['content-length', 'content-length: 100\r\n\r\nhello'],
  ])('a reset mid-body (%s): the next read() rejects', async (_framing, rest) => {
    const turn = gate();
    const raw = await startRawServer(async (socket) => {
      socket.write(`HTTP/1.1 200 OK\r\n${rest}`);
      await turn.opened;
      socket.resetAndDestroy();
    });
    const reader = readerOf(await fetchImpl(raw.url, post()));
    expect(text((await reader.read()).value)).toBe('hello');
    turn.open();
    await expect(reader.read()).rejects.toThrow();
  }, FEW_SECONDS);

  test('a body shorter than its Content-Length, then a close: text() and read() reject', async () => {
    const raw = await startRawServer((socket) => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{"half":'));
    await expect((await fetchImpl(raw.url, post())).text()).rejects.toThrow();
    await expect(readAll(readerOf(await fetchImpl(raw.url, post())))).rejects.toThrow();
  }, FEW_SECONDS);

  test('a whole answer over 32 MiB is refused, not held: text() rejects and the socket is dropped; a stream of the same size reads through', async () => {
    const piece = Buffer.alloc(1024 * 1024, 'a');
    const server = await startServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < 33 && !res.destroyed; i++) if (!res.write(piece)) await new Promise((resolve) => res.once('drain', resolve).once('close', resolve));
      res.end();
    });
    await expect((await fetchImpl(server.url, post())).text()).rejects.toThrow(/too large/);
    await server.seen.lastClosed;
    expect((await readAll(readerOf(await fetchImpl(server.url, post())))).length).toBe(33 * piece.length);
  }, 15_000);

  test('a malformed chunk size: the call fails (at fetch or at read), the socket dropped', async () => {
    let dropped: Promise<void> | undefined;
    const raw = await startRawServer((socket) => {
      dropped = closed(socket);
      socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nhello\r\n');
    });
    await expect(fetchImpl(raw.url, post()).then((response) => readAll(readerOf(response)))).rejects.toThrow();
    await dropped;
  }, FEW_SECONDS);

  test('abort before the head: fetch rejects with an AbortError, signal.reason is the reason given, the server sees its socket closed', async () => {
    const arrived = gate();
    const server = await startServer(() => arrived.open());
    const controller = new AbortController();
    const reason = new Error('the upstream deadline passed');
    const pending = fetchImpl(server.url, { ...post(), signal: controller.signal });
    await arrived.opened;
    controller.abort(reason);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError', cause: reason });
    expect(controller.signal.reason).toBe(reason);
    await server.seen.lastClosed;
  }, FEW_SECONDS);

  test('a signal aborted before the call: fetch rejects with an AbortError and the server sees no request', async () => {
    const server = await startServer((_req, res) => res.writeHead(200).end());
    const reason = new Error('client gone');
    await expect(fetchImpl(server.url, { ...post(), signal: AbortSignal.abort(reason) })).rejects.toMatchObject({ name: 'AbortError', cause: reason });
    await sleep(50);
    expect(server.seen.requests).toHaveLength(0);
  }, FEW_SECONDS);

  test('abort during the body: the pending read() rejects and the server sees its socket closed', async () => {
    const server = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).write(event(0)));
    const controller = new AbortController();
    const reader = readerOf(await fetchImpl(server.url, { ...post(), signal: controller.signal }));
    expect(text((await reader.read()).value)).toBe(event(0));
    const pending = reader.read();
    controller.abort(new Error('client gone'));
    await expect(pending).rejects.toThrow();
    await expect(reader.read()).rejects.toThrow();
    await server.seen.lastClosed;
  }, FEW_SECONDS);

  test('abort after the body was read changes nothing: the connection carries the next call', async () => {
    const server = await startServer((_req, res, body) => res.writeHead(200).end(`got ${body}`));
    const controller = new AbortController();
    expect(await (await fetchImpl(server.url, { ...post('a'), signal: controller.signal })).text()).toBe('got a');
    controller.abort(new Error('late'));
    await sleep(20);
    expect(await answerText(server.url, 'b')).toBe('got b');
    expect(server.seen.connections).toBe(1);
  }, FEW_SECONDS);

  test('cancel() mid-stream: the server sees the connection close; the next call works on a new one', async () => {
    const server = await startServer((_req, res, body) => {
      if (body.toString() === 'next') return res.writeHead(200).end('next answered');
      res.writeHead(200, { 'content-type': 'text/event-stream' }).write(event(0));
    });
    const reader = readerOf(await fetchImpl(server.url, post()));
    expect(text((await reader.read()).value)).toBe(event(0));
    await reader.cancel();
    await server.seen.lastClosed;
    expect(await answerText(server.url, 'next')).toBe('next answered');
    expect(server.seen.connections).toBe(2);
  }, FEW_SECONDS);

  test('backpressure: a reader that does not read holds a 20 MB writer back (no unbounded buffer), then gets every byte intact', async () => {
    const data = randomBytes(20 * 1024 * 1024);
    let written = 0;
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-length': String(data.length) });
      const pump = () => {
        while (written < data.length) {
          const piece = data.subarray(written, written + 64 * 1024);
          written += piece.length;
          if (!res.write(piece)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const response = await fetchImpl(server.url, post());
    await sleep(300);
    expect(written).toBeLessThan(data.length);
    expect(sha256(await readAll(readerOf(response)))).toBe(sha256(data));
  }, 10_000);

  test('204: a null body, hasBody false, and the connection carries the next call', async () => {
    const server = await startServer((_req, res, body) => (body.toString() === 'last' ? res.writeHead(200).end('after') : res.writeHead(204).end()));
    for (let i = 0; i < 2; i++) {
      const response = await fetchImpl(server.url, post());
      expect(response.status).toBe(204);
      expect(response.body).toBeNull();
      expect(hasBody(response)).toBe(false);
    }
    expect(await answerText(server.url, 'last')).toBe('after');
    expect(server.seen.connections).toBe(1);
  }, FEW_SECONDS);

  test('an interim 100 Continue before the answer is skipped', async () => {
    const raw = await startRawServer((socket) => {
      socket.write('HTTP/1.1 100 Continue\r\n\r\n');
      setTimeout(() => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'), 20);
    });
    const response = await fetchImpl(raw.url, post());
    expect([response.status, await response.text()]).toEqual([200, 'ok']);
  }, FEW_SECONDS);

  test.each([
    ['a value with CR LF', { 'x-api-key': 'k\r\nx-injected: 1' }],
    ['a name with a space', { 'bad name': 'v' }],
    ['a name with a colon', { 'x-a:b': 'v' }],
  ])('an invalid header (%s): fetch rejects and nothing reaches the server', async (_what, headers) => {
    const server = await startServer((_req, res) => res.writeHead(200).end());
    await expect(fetchImpl(server.url, post('', headers))).rejects.toMatchObject({ name: 'TypeError' });
    await sleep(50);
    expect(server.seen.connections).toBe(0);
  }, FEW_SECONDS);

  test('https: an untrusted certificate is refused; once its CA is trusted, two sequential calls share one connection', async () => {
    const front = await startLoopbackTls();
    const server = await startServer((_req, res, body) => res.writeHead(200).end(`secure ${body}`));
    const saved = tls.getCACertificates('default');
    try {
      const secure = `${await front.front(server.url)}/v1/messages`;
      await expect(fetchImpl(secure, post('untrusted'))).rejects.toThrow(/certificate/);
      tls.setDefaultCACertificates([...saved, readFileSync(front.caFile, 'utf8')]);
      for (const body of ['a', 'b']) expect(await answerText(secure, body)).toBe(`secure ${body}`);
      expect(server.seen.connections).toBe(1);
      expect(server.seen.requests.map((request) => request.url)).toEqual(['/v1/messages', '/v1/messages']);
    } finally {
      tls.setDefaultCACertificates(saved);
      await front.close();
    }
  }, 15_000);

  test('preconnectUpstream opens one connection ahead of the first call, which rides it; a refused address settles quietly', async () => {
    const server = await startServer((_req, res) => res.writeHead(200).end('ok'));
    await preconnectUpstream(`${server.url}/v1/messages`);
    await preconnectUpstream(`${server.url}/v1/other`);
    expect(server.seen.connections).toBe(1);
    expect(server.seen.requests).toHaveLength(0);
    expect(await answerText(`${server.url}/v1/messages`)).toBe('ok');
    expect(server.seen.connections).toBe(1);
    const refused = await startRawServer(() => {});
    await refused.close();
    await expect(preconnectUpstream(refused.url)).resolves.toBeUndefined();
    await expect(fetchImpl(refused.url, post())).rejects.toThrow();
  }, FEW_SECONDS);

  test('closeIdleUpstreamSockets closes the idle connection; the next call opens a new one', async () => {
    const server = await startServer((_req, res) => res.writeHead(200).end('ok'));
    expect(await answerText(server.url)).toBe('ok');
    closeIdleUpstreamSockets();
    await server.seen.lastClosed;
    expect(await answerText(server.url)).toBe('ok');
    expect(server.seen.connections).toBe(2);
  }, FEW_SECONDS);
});
