import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One DynamoDB call seen on its way to the store. */
export interface DynamoCall {
  /** `UpdateItem`, `Query`, …: the `X-Amz-Target` operation. */
  operation: string;
  table: string;
  /** Bytes of the call's JSON: a write under 1 KB writes an item under 1 KB, one write unit. */
  requestBytes: number;
  /** Bytes of the store's answer (a Query's answer carries the items it read). */
  answerBytes: number;
}

export interface DynamoCallLog {
  /** The address to give the function: this proxy, with the store's path (its per-run secret). */
  url: string;
  calls: DynamoCall[];
  close(): Promise<void>;
}

/**
 * An HTTP proxy in front of the embedded store that writes down every DynamoDB call passing
 * through it: what an instance asks of DynamoDB per request, counted rather than read off the
 * code. Requests and answers pass unchanged (the signature covers the host the function
 * signed for, which the store does not check).
 */
export async function startDynamoCallLog(storeEndpoint: string): Promise<DynamoCallLog> {
  const store = new URL(storeEndpoint);
  const agent = new http.Agent({ keepAlive: true });
  const calls: DynamoCall[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const target = String(request.headers['x-amz-target'] ?? '');
      const table = (JSON.parse(body.toString() || '{}') as { TableName?: string }).TableName ?? '';
      const forwarded = http.request(
        { host: store.hostname, port: store.port, path: request.url, method: request.method, headers: request.headers, agent },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => parts.push(chunk));
          answer.on('end', () => {
            const bytes = Buffer.concat(parts);
            calls.push({ operation: target.slice(target.indexOf('.') + 1), table, requestBytes: body.length, answerBytes: bytes.length });
            response.writeHead(answer.statusCode ?? 500, answer.headers).end(bytes);
          });
        },
      );
      forwarded.on('error', () => response.destroy());
      forwarded.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${store.pathname.replace(/\/$/, '')}`,
    calls,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      agent.destroy();
    },
  };
}
