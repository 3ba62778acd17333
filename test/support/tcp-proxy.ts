import net from 'node:net';

export interface TcpProxy {
  /** The proxy's address, http://127.0.0.1:<port>, with the target's path (the embedded store's per-run secret is its path). */
  url: string;
  /** TCP connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

export interface TcpProxyOptions {
  /**
   * Holds server-to-client bytes until this many are waiting or `holdMs` has passed since the
   * first of them: a hop that delays small writes, as practitioners report of Lambda Function
   * URLs (docs/deployment.md, "Check it end to end"). Absent: bytes pass at once.
   */
  holdSmallWrites?: { untilBytes: number; holdMs: number };
  /** The first this many connections are accepted and never answered (a service that hangs); later ones pass. */
  stallFirst?: number;
}

/** A loopback TCP proxy to `target` (an http:// origin): counts connections, and can hold small writes. */
export async function startTcpProxy(target: string, options: TcpProxyOptions = {}): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  let count = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    count += 1;
    if (count <= (options.stallFirst ?? 0)) {
      sockets.add(client);
      client.on('error', () => {}).on('close', () => sockets.delete(client));
      client.resume();
      return;
    }
    const upstream = net.connect({ host: hostname, port: Number(port), noDelay: true });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {}).on('close', () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(socket);
      });
    }
    client.setNoDelay(true);
    client.pipe(upstream);
    const hold = options.holdSmallWrites;
    if (!hold) {
      upstream.pipe(client);
      return;
    }
    let waiting: Buffer[] = [];
    let size = 0;
    let timer: NodeJS.Timeout | undefined;
    const flush = () => {
      clearTimeout(timer);
      timer = undefined;
      if (size > 0 && !client.destroyed) client.write(Buffer.concat(waiting));
      waiting = [];
      size = 0;
    };
    upstream.on('data', (chunk: Buffer) => {
      waiting.push(chunk);
      size += chunk.length;
      if (size >= hold.untilBytes) flush();
      else timer ??= setTimeout(flush, hold.holdMs);
    });
    upstream.on('end', () => {
      flush();
      client.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}${new URL(target).pathname.replace(/\/$/, '')}`,
    connections: () => count,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
