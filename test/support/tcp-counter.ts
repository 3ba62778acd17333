import net from 'node:net';

export interface TcpCounter {
  /** The proxy's origin: http://127.0.0.1:<port>. */
  url: string;
  /** TCP connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/** A loopback TCP proxy to `target` (an http:// origin) that counts the connections made through it. */
export async function startTcpCounter(target: string): Promise<TcpCounter> {
  const { hostname, port } = new URL(target);
  let count = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    count += 1;
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
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    connections: () => count,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
