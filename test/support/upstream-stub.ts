import { readFileSync } from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import { listen } from './gateway-harness.ts';
import { eventually } from './processes.ts';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Resolves when the gateway closed this request's connection (e.g. it aborted the call). */
  closed: Promise<void>;
}

export type StubHandler = (request: RecordedRequest, res: http.ServerResponse) => void | Promise<void>;

export interface UpstreamStub {
  url: string;
  requests: RecordedRequest[];
  /** Replaces how the next requests are answered. */
  reply(handler: StubHandler): void;
  close(): Promise<void>;
}

/** A scripted provider on 127.0.0.1 that records every request it receives, raw. */
export async function startUpstream(handler: StubHandler = sendJson(200, {})): Promise<UpstreamStub> {
  let current = handler;
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    const closed = new Promise<void>((resolve) => res.on('close', () => resolve()));
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), closed };
      requests.push(recorded);
      void current(recorded, res);
    });
  });
  const url = await listen(server);
  return {
    url,
    requests,
    reply(next) {
      current = next;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export function fixture(path: string): string {
  return readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8');
}

export function sendJson(status: number, body: unknown, headers: Record<string, string> = {}): StubHandler {
  return (_request, res) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_upstream_1', ...headers });
    res.end(text);
  };
}

/** Streams SSE text in the given pieces, `gapMs` apart. */
export function sendSse(pieces: string | string[], options: { gapMs?: number; status?: number; headers?: Record<string, string>; end?: 'close' | 'destroy' } = {}): StubHandler {
  return async (_request, res) => {
    res.writeHead(options.status ?? 200, { 'content-type': 'text/event-stream; charset=utf-8', 'request-id': 'req_upstream_1', ...options.headers });
    for (const piece of Array.isArray(pieces) ? pieces : [pieces]) {
      if (res.destroyed) return;
      res.write(piece);
      if (options.gapMs) await new Promise((resolve) => setTimeout(resolve, options.gapMs));
    }
    if (options.end === 'destroy') res.socket?.destroy();
    else res.end();
  };
}

/** Splits an SSE text into its events (each with its blank line). */
export function sseEvents(text: string): string[] {
  return text.split(/(?<=\n\n)/).filter((event) => event.trim().length > 0);
}

/**
 * Holds an upstream's replies while a batch of requests is sent at once, so that none ends (and
 * gives back what it holds: a slot, a lease) before the last has asked: the replies wait until
 * every request is either held at the upstream or answered without it, however slowly a loaded
 * machine runs them (a fixed hold let early ones finish first). Outside a batch a reply waits
 * `idleMs`. A reply awaits `passage()`.
 */
export function replyGate(upstream: UpstreamStub, idleMs = 300) {
  let hold: Promise<void> | undefined;
  return {
    passage: (): Promise<void> => hold ?? new Promise((resolve) => setTimeout(resolve, idleMs)),
    async batch<T>(count: number, send: (index: number) => Promise<T>): Promise<T[]> {
      let release!: () => void;
      hold = new Promise((resolve) => (release = resolve));
      const before = upstream.requests.length;
      let answered = 0;
      try {
        const answers = Array.from({ length: count }, (_, index) => send(index).finally(() => answered++));
        await eventually(() => {
          if (upstream.requests.length - before + answered < count) throw new Error(`${upstream.requests.length - before} requests held upstream and ${answered} answered of ${count}`);
        }, 10_000);
        release();
        return await Promise.all(answers);
      } finally {
        release();
        hold = undefined;
      }
    },
  };
}
