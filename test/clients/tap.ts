import { appendFileSync, mkdirSync } from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { listen } from '../support/gateway-harness.ts';

/**
 * A byte-transparent recording pass-through between a CLI and the gateway, on 127.0.0.1. It
 * relays each request and streams each response back chunk by chunk as it arrives (a dropped
 * gateway connection drops the client's), and keeps both sides: the suite asserts on what the
 * real clients sent (e.g. a simulator's thinking signature coming back on the next turn, or that
 * a rejected key was tried only once), which the gateway itself does not log.
 */
export interface TapExchange {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
  responseHeaders: IncomingHttpHeaders;
  /** The response body as received so far (kept up to 1 MB). */
  response: string;
  startedAt: number;
  /** When the exchange was over: the gateway ended its response, or either side hung up. */
  endedAt: number | undefined;
  /**
   * The CLI closed its connection before the gateway's response ended. Codex drops a stream as
   * soon as it has read `response.completed`, which can be before the gateway's final chunk
   * reaches the tap, so such an exchange still ended (its `response` holds what was relayed).
   */
  clientHungUp: boolean;
}

const KEEP_BYTES = 1 << 20;

/**
 * With CLIENTS_CAPTURE=<dir>, every exchange is also written to <dir>/<file>.jsonl once it is over:
 * the test it belongs to, the request as the CLI sent it (credentials masked) and the answer's
 * status and headers. `node test/clients/capture-summary.ts` condenses a capture, so that two
 * client versions can be compared (docs/testing.md, "Bumping the client pins").
 */
function capture(exchange: TapExchange, file: string): void {
  const dir = process.env.CLIENTS_CAPTURE;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  const masked = Object.fromEntries(Object.entries(exchange.headers).map(([name, value]) => [name, /^(authorization|x-api-key)$/i.test(name) ? '(masked)' : value]));
  let body: unknown = exchange.body;
  try {
    body = exchange.body ? JSON.parse(exchange.body) : undefined;
  } catch {
    // not JSON: kept as text
  }
  const test = (globalThis as { expect?: { getState?: () => { currentTestName?: string } } }).expect?.getState?.().currentTestName;
  appendFileSync(join(dir, `${file}.jsonl`), `${JSON.stringify({ test, method: exchange.method, url: exchange.url, headers: masked, body, status: exchange.status, responseHeaders: exchange.responseHeaders })}\n`);
}

export interface Tap {
  url: string;
  exchanges: TapExchange[];
  /** Relays to another address from now on (a tap started before the server it fronts, whose address names the tap). */
  retarget(target: string): void;
  reset(): void;
  close(): Promise<void>;
}

/** `label` names the capture file (CLIENTS_CAPTURE). */
export async function startTap(target: string, label = 'tap'): Promise<Tap> {
  const exchanges: TapExchange[] = [];
  let to = new URL(target);
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const exchange: TapExchange = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: body.toString('utf8'),
        status: 0,
        responseHeaders: {},
        response: '',
        startedAt: Date.now(),
        endedAt: undefined,
        clientHungUp: false,
      };
      exchanges.push(exchange);
      const headers = { ...req.headers, host: to.host };
      const upstream = http.request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers, agent }, (answer) => {
        exchange.status = answer.statusCode ?? 0;
        exchange.responseHeaders = answer.headers;
        res.writeHead(exchange.status, answer.rawHeaders);
        res.flushHeaders();
        answer.on('data', (chunk: Buffer) => {
          if (exchange.response.length < KEEP_BYTES) exchange.response += chunk.toString('utf8');
          res.write(chunk);
        });
        answer.on('end', () => {
          exchange.endedAt = Date.now();
          capture(exchange, label);
          res.end();
        });
        answer.on('error', () => res.destroy());
        answer.on('aborted', () => res.destroy());
      });
      upstream.on('error', () => {
        exchange.endedAt = Date.now();
        res.destroy();
      });
      res.on('close', () => {
        if (res.writableFinished) return;
        exchange.clientHungUp = true;
        if (exchange.endedAt === undefined) {
          exchange.endedAt = Date.now();
          capture(exchange, label);
        }
        upstream.destroy();
      });
      upstream.end(body);
    });
  });
  const url = await listen(server);
  return {
    url,
    exchanges,
    retarget: (next) => {
      to = new URL(next);
    },
    reset: () => {
      exchanges.length = 0;
    },
    async close() {
      server.closeAllConnections();
      agent.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
