import net from 'node:net';
import { InvocationResponseStream } from '../../../lambda/runtime-client/response-stream.ts';
import { until } from '../../support/processes.ts';

/**
 * InvocationResponseStream on a real loopback socket: the server keeps the raw bytes the stream
 * writes, and the test decodes them as the Runtime API would (head, chunks, trailers).
 */
const CRLF = Buffer.from('\r\n');
const ERROR_TRAILERS = ['Lambda-Runtime-Function-Error-Type', 'Lambda-Runtime-Function-Error-Body'];

let server: net.Server;
let client: net.Socket;
let peer: net.Socket;
/** The raw bytes the server read, and how many. */
let received: Buffer[];
let receivedBytes: number;

beforeEach(async () => {
  [received, receivedBytes] = [[], 0];
  server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
  client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  client.on('error', () => {});
  await new Promise((resolve) => client.once('connect', resolve));
  peer = await accepted;
  peer.on('error', () => {});
  peer.on('data', (chunk: Buffer) => {
    received.push(chunk);
    receivedBytes += chunk.length;
  });
});

afterEach(async () => {
  client.destroy();
  peer.destroy();
  await new Promise((resolve) => server.close(resolve));
});

/** Header names in lower case, trailer names as sent; end: where the request ended in the bytes. */
type Request = { requestLine: string; headers: Record<string, string>; chunks: Buffer[]; trailers: Record<string, string>; end: number };

/** A chunked HTTP/1.1 request decoded strictly, or undefined while it is incomplete. */
function decodeRequest(data: Buffer): Request | undefined {
  const headEnd = data.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const [requestLine = '', ...lines] = data.toString('latin1', 0, headEnd).split('\r\n');
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  const chunks: Buffer[] = [];
  for (let at = headEnd + 4; ; ) {
    const lineEnd = data.indexOf(CRLF, at);
    if (lineEnd < 0) return undefined;
    const size = Number.parseInt(data.toString('latin1', at, lineEnd), 16);
    if (!/^[0-9a-f]+$/i.test(data.toString('latin1', at, lineEnd))) throw new Error(`no chunk size at ${at}`);
    if (size === 0) {
      const trailers: Record<string, string> = {};
      for (let line = lineEnd + 2; ; ) {
        const end = data.indexOf(CRLF, line);
        if (end < 0) return undefined;
        if (end === line) return { requestLine, headers, chunks, trailers, end: end + 2 };
        const text = data.toString('latin1', line, end);
        trailers[text.slice(0, text.indexOf(':'))] = text.slice(text.indexOf(':') + 1).trim();
        line = end + 2;
      }
    }
    const dataEnd = lineEnd + 2 + size;
    if (data.length < dataEnd + 2) return undefined;
    if (!data.subarray(dataEnd, dataEnd + 2).equals(CRLF)) throw new Error(`chunk at ${at} not followed by CRLF`);
    chunks.push(data.subarray(lineEnd + 2, dataEnd));
    at = dataEnd + 2;
  }
}

/** The whole request the server received, once it has. */
const request = () => until(() => decodeRequest(Buffer.concat(received)), 'the whole request');

test('a prelude, an empty write and "hello" leave as the streaming POST: head, prelude chunk ending in 8 NULs, "hello" chunk, last chunk', async () => {
  const stream = new InvocationResponseStream(client, '127.0.0.1:9001', 'req-1');
  const prelude = { statusCode: 200, headers: { 'content-type': 'text/plain' } };
  stream.withPrelude(prelude);
  stream.write('');
  stream.write('hello');
  stream.end();
  const { requestLine, headers, chunks, trailers, end } = await request();
  expect(requestLine).toBe('POST /2018-06-01/runtime/invocation/req-1/response HTTP/1.1');
  expect(headers).toMatchObject({
    host: '127.0.0.1:9001',
    'lambda-runtime-function-response-mode': 'streaming',
    'content-type': 'application/vnd.awslambda.http-integration-response',
    'transfer-encoding': 'chunked',
  });
  expect(headers.trailer?.split(/\s*,\s*/)).toEqual(ERROR_TRAILERS);
  // The empty write makes no chunk (an empty one would be the last chunk).
  const json = Buffer.from(JSON.stringify(prelude));
  expect(chunks.map((chunk) => chunk.toString('latin1'))).toEqual([Buffer.concat([json, Buffer.alloc(8)]).toString('latin1'), 'hello']);
  expect(Buffer.concat(chunks).equals(Buffer.concat([json, Buffer.alloc(8), Buffer.from('hello')]))).toBe(true);
  // A clean end: the bare last chunk, no trailers, nothing after it.
  expect(trailers).toEqual({});
  expect(Buffer.concat(received).subarray(end - 5).toString('latin1')).toBe('0\r\n\r\n');
  expect(end).toBe(receivedBytes);
});

test('a whole answer is handed to the socket by the time the stream finishes, before what the handler does next', async () => {
  const stream = new InvocationResponseStream(client, '127.0.0.1:9001', 'req-1');
  stream.withPrelude({ statusCode: 200 });
  stream.write('');
  stream.write('the whole answer');
  // Where middy runs the gateway's requestEnd (its usage writes): nothing of the answer may still be corked.
  const corkedAtFinish = await new Promise<number>((resolve) => stream.end(() => resolve(client.writableCorked)));
  expect(corkedAtFinish).toBe(0);
  const { chunks } = await request();
  expect(chunks.at(-1)?.toString('latin1')).toBe('the whole answer');
});

test('fail() after a chunk ends the body with the error trailers; a second fail() or end() writes nothing more', async () => {
  const stream = new InvocationResponseStream(client, '127.0.0.1:9001', 'req-1');
  await new Promise((resolve) => stream.write('partial', resolve));
  stream.fail(new TypeError('boom'));
  const { chunks, trailers, end } = await request();
  expect(chunks.map(String)).toEqual(['partial']);
  const raw = Buffer.concat(received).toString('latin1');
  expect(raw.slice(raw.indexOf('\r\n0\r\n') + 2, end)).toMatch(/^0\r\nLambda-Runtime-Function-Error-Type: TypeError\r\nLambda-Runtime-Function-Error-Body: [A-Za-z0-9+/]+=*\r\n\r\n$/);
  expect(trailers['Lambda-Runtime-Function-Error-Type']).toBe('TypeError');
  const document = JSON.parse(Buffer.from(trailers['Lambda-Runtime-Function-Error-Body'] as string, 'base64').toString('utf8'));
  expect(document).toMatchObject({ errorType: 'TypeError', errorMessage: 'boom' });
  expect(document.trace[0]).toBe('TypeError: boom');
  expect(stream.responseEnded).toBe(true);

  stream.fail(new Error('again'));
  // (Errors come from another realm under jest's VM modules: matched by shape, not instanceof.)
  expect(await new Promise((resolve) => stream.write('late', resolve))).toHaveProperty('message', expect.any(String));
  stream.end();
  // A marker on the socket itself, once the stream's deferred work (_final runs on a next tick) had
  // its turn: whatever the stream wrote after the failure would come before it.
  await new Promise((resolve) => setImmediate(resolve));
  client.write('MARK');
  await until(() => Buffer.concat(received).toString('latin1').endsWith('MARK'), 'the marker');
  expect(receivedBytes).toBe(end + 4);
});

test('fail() before anything was written still sends the head, then the last chunk with the trailers', async () => {
  const stream = new InvocationResponseStream(client, '127.0.0.1:9001', 'req-1');
  stream.fail(new Error('early'));
  const { requestLine, headers, chunks, trailers, end } = await request();
  expect(requestLine).toBe('POST /2018-06-01/runtime/invocation/req-1/response HTTP/1.1');
  expect(headers['transfer-encoding']).toBe('chunked');
  expect(chunks).toEqual([]);
  expect(Object.keys(trailers)).toEqual(ERROR_TRAILERS);
  expect(JSON.parse(Buffer.from(trailers['Lambda-Runtime-Function-Error-Body'] as string, 'base64').toString('utf8'))).toMatchObject({ errorType: 'Error', errorMessage: 'early' });
  expect(end).toBe(receivedBytes);
});

test('an error whose name carries a line break cannot add a header: the trailer\'s type is made printable, the body keeps it', async () => {
  const stream = new InvocationResponseStream(client, '127.0.0.1:9001', 'req-1');
  stream.fail(Object.assign(new Error('odd'), { name: 'Bad\r\nX-Injected: 1' }));
  const { trailers, end } = await request();
  expect(Object.keys(trailers)).toEqual(ERROR_TRAILERS);
  expect(trailers['Lambda-Runtime-Function-Error-Type']).toBe('Bad??X-Injected: 1');
  expect(JSON.parse(Buffer.from(trailers['Lambda-Runtime-Function-Error-Body'] as string, 'base64').toString('utf8'))).toMatchObject({ errorType: 'Bad\r\nX-Injected: 1' });
  expect(end).toBe(receivedBytes);
});

test('setContentType works until the first write and throws "Cannot set content-type, too late." after it', async () => {
  const stream = new InvocationResponseStream(client, '127.0.0.1:9001', 'req-1');
  stream.setContentType('text/plain');
  stream.write('x');
  expect(() => stream.setContentType('application/json')).toThrow('Cannot set content-type, too late.');
  expect(() => stream.withPrelude({ statusCode: 200 })).toThrow('Cannot set content-type, too late.');
  stream.end();
  const { headers, chunks } = await request();
  expect(headers['content-type']).toBe('text/plain');
  expect(chunks.map(String)).toEqual(['x']);
});

test('a request id with "/", "?" and a space is percent-encoded in the path', async () => {
  const stream = new InvocationResponseStream(client, '127.0.0.1:9001', 'a/b?c d');
  stream.end();
  expect((await request()).requestLine).toBe('POST /2018-06-01/runtime/invocation/a%2Fb%3Fc%20d/response HTTP/1.1');
});

describe('backpressure, the server not reading', () => {
  const CHUNK = 64 * 1024;
  // 16 MiB: more than the loopback socket buffers take while the server reads nothing.
  const COUNT = 256;
  const chunkAt = (i: number) => Buffer.alloc(CHUNK, i & 0xff);

  test('writes wait for the socket to drain; once the server reads, every byte arrives in order and "finish" fires', async () => {
    peer.pause();
    const stream = new InvocationResponseStream(client, '127.0.0.1:9001', 'req-1');
    let done = 0;
    let refused = false;
    for (let i = 0; i < COUNT; i++) refused = !stream.write(chunkAt(i), () => done++) || refused;
    const finished = new Promise((resolve) => stream.once('finish', resolve));
    stream.end();
    expect(refused).toBe(true);
    await until(() => client.writableNeedDrain, 'the socket to fill');
    // Held back in the stream, not piled into the socket: at most one chunk (and its framing) waits there.
    expect(done).toBeLessThan(COUNT);
    expect(client.writableLength).toBeLessThan(2 * CHUNK);

    peer.resume();
    await until(() => done === COUNT, 'every write callback');
    await finished;
    await until(() => client.writableLength === 0 && receivedBytes === client.bytesWritten, 'every byte at the server');
    const { chunks, end } = decodeRequest(Buffer.concat(received)) as Request;
    expect(end).toBe(receivedBytes);
    expect(chunks).toHaveLength(COUNT);
    chunks.forEach((chunk, i) => expect(chunk.equals(chunkAt(i))).toBe(true));
  });

  test('a write after the connection is gone fails at once instead of waiting for a drain that never comes', async () => {
    const stream = new InvocationResponseStream(client, '127.0.0.1:9001', 'req-1');
    const closed = new Promise((resolve) => client.once('close', resolve));
    client.destroy();
    await closed;
    const failed = new Promise<Error | null | undefined>((resolve) => stream.write('x', resolve));
    expect((await failed)?.message).toBe('the Runtime API closed the connection');
  });

  test('the server dropping the connection while a write waits for drain fails that write instead of leaving it hanging', async () => {
    peer.pause();
    const stream = new InvocationResponseStream(client, '127.0.0.1:9001', 'req-1');
    const errors: Error[] = [];
    stream.on('error', (error) => errors.push(error));
    for (let i = 0; i < COUNT; i++) stream.write(chunkAt(i), (error) => error && errors.push(error));
    await until(() => client.writableNeedDrain, 'the socket to fill');
    peer.destroy();
    await until(() => errors.find((error) => error.message === 'the Runtime API closed the connection'), 'the waiting write to fail');
  });
});
