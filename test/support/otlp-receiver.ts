import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OTLP/HTTP receiver on loopback that checks what an OTLP collector checks (the signal's path,
 * a supported content type) and keeps each body's bytes and headers. `status` is what it answers.
 */
export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface OtlpReceiver {
  url: string;
  received: Received[];
  status: number;
  /** Resolves once `count` bodies have arrived (the gateway forwards after its answer). */
  waitFor(count: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const type = req.headers['content-type'] ?? '';
      if (req.method !== 'POST' || !/^\/v1\/(metrics|logs|traces)$/.test(req.url ?? '')) return void res.writeHead(404).end();
      if (!/^application\/(x-protobuf|json)$/.test(type)) return void res.writeHead(415).end();
      received.push({ path: req.url as string, headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(receiver.status, { 'content-type': type }).end(type === 'application/json' ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const receiver: OtlpReceiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    status: 200,
    async waitFor(count) {
      for (const until = Date.now() + 5_000; received.length < count; ) {
        if (Date.now() > until) throw new Error(`the receiver got ${received.length} of ${count}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return received;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return receiver;
}
