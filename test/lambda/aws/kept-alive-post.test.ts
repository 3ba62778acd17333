import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { startLoopbackTls } from '../../../bench/lambda/loopback-tls.ts';
import { awsJsonCall } from '../../../lambda/aws/aws-json.ts';
import { closeIdleSockets, MAX_SOCKETS, postForText } from '../../../lambda/aws/kept-alive-post.ts';
import { closeTestServers, startCountingServer as startServer, startRawServer } from '../../support/test-http-servers.ts';

const json = (res: http.ServerResponse, payload: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
const ok = (text: string) => `HTTP/1.1 200 OK\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
const credentials = async () => ({ accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' });
const service = (endpoint: string) => ({ service: 'dynamodb', targetPrefix: 'DynamoDB_20120810', jsonVersion: '1.0', region: 'us-east-1', endpoint, credentials });

afterEach(async () => {
  closeIdleSockets();
  await closeTestServers();
});

describe('postForText', () => {
  test('many calls in sequence ride one socket; the body, its length and the headers arrive as sent', async () => {
    const server = await startServer((req, res, body) => json(res, { echo: body.toString(), target: req.headers['x-amz-target'], host: req.headers.host }));
    for (let i = 0; i < 20; i++) {
      const answer = await postForText(server.url, { 'x-amz-target': `T.${i}` }, JSON.stringify({ i, text: 'é€' }));
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text)).toEqual({ echo: JSON.stringify({ i, text: 'é€' }), target: `T.${i}`, host: new URL(server.url).host });
    }
    expect(server.seen.connections).toBe(1);
    await server.close();
  });

  test('concurrent calls: every one answered, on at most MAX_SOCKETS sockets', async () => {
    const server = await startServer((_req, res, body) => setTimeout(() => json(res, { body: body.toString() }), 20));
    const calls = Array.from({ length: MAX_SOCKETS * 3 }, (_, i) => postForText(server.url, {}, String(i)));
    const answers = await Promise.all(calls);
    expect(answers.map((answer) => JSON.parse(answer.text).body)).toEqual(calls.map((_, i) => String(i)));
    expect(server.seen.mostOpen).toBe(MAX_SOCKETS);
    expect(server.seen.requests).toHaveLength(MAX_SOCKETS * 3);
    await server.close();
  });

  test('an idle socket the server closed is not used again: the next call opens another', async () => {
    const server = await startServer((_req, res) => json(res, {}));
    await postForText(server.url, {}, 'a');
    await server.closeIdleConnections();
    expect((await postForText(server.url, {}, 'b')).status).toBe(200);
    expect(server.seen.connections).toBe(2);
    await server.close();
  });

  test('`Connection: close` from the server: the answer is read, the socket not reused', async () => {
    const server = await startServer((_req, res) => res.writeHead(200, { connection: 'close', 'content-length': '2' }).end('{}'));
    for (let i = 0; i < 3; i++) expect((await postForText(server.url, {}, 'x')).text).toBe('{}');
    expect(server.seen.connections).toBe(3);
    await server.close();
  });

  test('a chunked answer, its chunks written apart, is read whole; and the socket carries the next call', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"a":');
      setTimeout(() => res.end('"ü"}'), 10);
    });
    expect(JSON.parse((await postForText(server.url, {}, '')).text)).toEqual({ a: 'ü' });
    expect(JSON.parse((await postForText(server.url, {}, '')).text)).toEqual({ a: 'ü' });
    expect(server.seen.connections).toBe(1);
    await server.close();
  });

  test('an answer framed by the close only, and one split byte by byte', async () => {
    const raw = await startRawServer((socket, index) => {
      if (index === 0) return socket.end('HTTP/1.1 200 OK\r\n\r\n{"framed":"by close"}');
      const bytes = Buffer.from(ok('{"split":true}'));
      bytes.forEach((_, i) => setTimeout(() => socket.write(bytes.subarray(i, i + 1)), i));
    });
    expect((await postForText(raw.url, {}, '')).text).toBe('{"framed":"by close"}');
    expect((await postForText(raw.url, {}, '')).text).toBe('{"split":true}');
    await raw.close();
  });

  test('a reset mid-answer, a truncated body, a close before any answer: each call fails, none hangs', async () => {
    const raw = await startRawServer((socket, index) => {
      const head = 'HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{"half":';
      if (index === 0) return socket.write(head, () => setTimeout(() => socket.resetAndDestroy(), 10));
      if (index === 1) return socket.end(head);
      socket.end();
    });
    await expect(postForText(raw.url, {}, '')).rejects.toThrow(/closed before the answer was complete/);
    await expect(postForText(raw.url, {}, '')).rejects.toThrow(/closed before the answer was complete/);
    await expect(postForText(raw.url, {}, '')).rejects.toThrow(/socket hang up/);
    await raw.close();
  });

  test('what is not an HTTP/1.1 answer, or bytes nobody asked for, is refused and the socket dropped', async () => {
    const raw = await startRawServer((socket, index) => {
      if (index === 0) return socket.write('SSH-2.0-nope\r\n\r\n');
      if (index === 1) return socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\n');
      // An answer followed by a second one nobody asked for: the first is taken, the socket not kept.
      socket.write(ok('{}') + ok('{"stray":1}'));
    });
    await expect(postForText(raw.url, {}, '')).rejects.toThrow(/Not an HTTP\/1.x answer/);
    await expect(postForText(raw.url, {}, '')).rejects.toThrow(/transfer coding not handled/);
    expect((await postForText(raw.url, {}, '')).text).toBe('{}');
    expect((await postForText(raw.url, {}, '')).text).toBe('{}');
    expect(raw.requests()).toBe(4);
    await raw.close();
  });

  test('a slow answer is waited for, and does not hold up a call on another socket', async () => {
    const server = await startServer((_req, res, body) => setTimeout(() => json(res, { body: body.toString() }), body.toString() === 'slow' ? 400 : 0));
    const order: string[] = [];
    const slow = postForText(server.url, {}, 'slow').then(() => order.push('slow'));
    const fast = postForText(server.url, {}, 'fast').then(() => order.push('fast'));
    await Promise.all([slow, fast]);
    expect(order).toEqual(['fast', 'slow']);
    await server.close();
  });

  test('a header value with a line break is refused before anything is sent', async () => {
    const server = await startServer((_req, res) => json(res, {}));
    await expect(postForText(server.url, { 'x-amz-target': 'a\r\nx-injected: 1' }, '')).rejects.toThrow(/Invalid character/);
    expect(server.seen.requests).toHaveLength(0);
    await server.close();
  });

  test('over TLS: a certificate checked, one socket for many calls', async () => {
    const front = await startLoopbackTls();
    const server = await startServer((_req, res, body) => json(res, { body: body.toString() }));
    const saved = tls.getCACertificates('default');
    try {
      const secure = `${await front.front(server.url.replace(/\/$/, ''))}/`;
      await expect(postForText(secure, {}, 'untrusted')).rejects.toThrow(/certificate/);
      tls.setDefaultCACertificates([...saved, (await import('node:fs')).readFileSync(front.caFile, 'utf8')]);
      for (let i = 0; i < 5; i++) expect(JSON.parse((await postForText(secure, {}, String(i))).text)).toEqual({ body: String(i) });
      expect(server.seen.connections).toBe(1);
    } finally {
      tls.setDefaultCACertificates(saved);
      await server.close();
      await front.close();
    }
  });
});

describe('awsJsonCall on kept-alive sockets: the retry policy as before', () => {
  test('a socket closed as the request arrived: sent once more, on a new socket (the request may have been applied)', async () => {
    const raw = await startRawServer((socket, index) => (index === 0 ? socket.end() : socket.write(ok('{"n":1}'))));
    expect(await awsJsonCall(service(raw.url), 'UpdateItem', {})).toEqual({ n: 1 });
    expect(raw.requests()).toBe(2);
    await raw.close();
  });

  test('a reset after the request was written: one more attempt, never a third', async () => {
    const raw = await startRawServer((socket) => socket.resetAndDestroy());
    await expect(awsJsonCall(service(raw.url), 'UpdateItem', {})).rejects.toMatchObject({ name: 'NetworkingError', status: 0 });
    expect(raw.requests()).toBe(2);
    await raw.close();
  });
});
