import http from 'node:http';
import net from 'node:net';
import { listen } from './gateway-harness.ts';

/**
 * Loopback servers for the gateway's HTTP client tests (test/lambda/aws/kept-alive-post.test.ts,
 * test/lambda/upstream/upstream-fetch.test.ts): a real node:http server that counts what it saw,
 * and a raw TCP one for what node:http would never send (resets, truncations, broken framing).
 * Every server started is closed by `closeTestServers` (afterEach), passed or failed: an open one
 * keeps jest from exiting.
 */
const openServers: (() => Promise<unknown>)[] = [];

export function closeTestServers(): Promise<unknown> {
  return Promise.all(openServers.splice(0).map((close) => close()));
}

export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export const socketClosed = (socket: net.Socket) => new Promise<void>((resolve) => socket.once('close', () => resolve()));

/** A node:http server counting its connections (and the most open at once), the requests it read, and when its last connection closed. */
export async function startCountingServer(answer: (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => unknown) {
  const seen = { connections: 0, open: 0, mostOpen: 0, requests: [] as SeenRequest[], lastClosed: Promise.resolve() };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      answer(req, res, body);
    });
  });
  server.on('connection', (socket: net.Socket) => {
    seen.connections++;
    seen.mostOpen = Math.max(seen.mostOpen, ++seen.open);
    seen.lastClosed = socketClosed(socket);
    socket.on('close', () => seen.open--);
  });
  const url = await listen(server);
  const close = () => (server.closeAllConnections(), new Promise((resolve) => server.close(resolve)));
  openServers.push(close);
  /**
   * Closes the idle connections and resolves once a client in this process has read the close:
   * it does in the first poll after the server's socket closed (before it, any client would write
   * into the dead socket, node:http too), so no timer, which a loaded machine could run first.
   */
  const closeIdleConnections = async () => {
    server.closeIdleConnections();
    await seen.lastClosed;
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { url, seen, close, closeIdleConnections };
}

/** A raw TCP server calling `onRequest` for each request head it reads. */
export async function startRawServer(onRequest: (socket: net.Socket, index: number) => void) {
  let requests = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      if (chunk.includes('\r\n\r\n')) onRequest(socket, requests++);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`;
  const close = () => (sockets.forEach((socket) => socket.destroy()), new Promise((resolve) => server.close(resolve)));
  openServers.push(close);
  return { url, requests: () => requests, close };
}
