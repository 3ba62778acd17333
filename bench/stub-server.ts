import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveParent } from './child-ipc.ts';
import { jsonReply, streamEvents, type UpstreamFormat } from './stub-formats.ts';

/**
 * The benchmark's upstream: a bare node:http server on 127.0.0.1, run as its own process so its
 * CPU is never charged to the gateway. It answers the three provider paths the gateway can call
 * with pre-rendered bytes, so it costs as little as a Node server can.
 *
 * The model name sets a stream's shape: `<anything>-e<deltas>-g<gapMs>`, e.g. `claude-bench-e16-g0`
 * is 16 text deltas sent at once, `gpt-bench-e40-g250` 40 deltas 250 ms apart. The same name
 * works direct and through the gateway (which forwards it unchanged).
 */
const FORMAT_OF_PATH: Record<string, UpstreamFormat> = {
  '/v1/messages': 'messages',
  '/v1/responses': 'responses',
  '/v1/chat/completions': 'chat',
};

const SHAPE = /-e(\d+)-g(\d+)$/;
const MODEL = /"model"\s*:\s*"([^"\\]{1,200})"/;
const STREAM = /"stream"\s*:\s*true/;

interface Rendered {
  json: Buffer;
  events: Buffer[];
  gapMs: number;
}

// A handful of distinct models per run, so the cache stays small; pre-rendering keeps the stub
// from spending CPU on JSON while the gateway is measured.
const rendered = new Map<string, Rendered>();

function render(format: UpstreamFormat, model: string): Rendered {
  const cacheKey = `${format} ${model}`;
  let entry = rendered.get(cacheKey);
  if (entry === undefined) {
    const shape = SHAPE.exec(model);
    const deltas = shape ? Number(shape[1]) : 16;
    entry = {
      json: Buffer.from(jsonReply(format, model)),
      events: streamEvents(format, model, deltas).map((event) => Buffer.from(event)),
      gapMs: shape ? Number(shape[2]) : 0,
    };
    rendered.set(cacheKey, entry);
  }
  return entry;
}

function answer(req: http.IncomingMessage, res: http.ServerResponse, body: string): void {
  const format = FORMAT_OF_PATH[req.url ?? ''];
  if (req.method !== 'POST' || format === undefined) {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such path"}');
    return;
  }
  const entry = render(format, MODEL.exec(body)?.[1] ?? 'bench-model');
  if (!STREAM.test(body)) {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': entry.json.length, 'request-id': 'req_stub' }).end(entry.json);
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': 'req_stub' });
  if (entry.gapMs === 0) {
    for (const event of entry.events) res.write(event);
    res.end();
    return;
  }
  sendPaced(res, entry.events, entry.gapMs);
}

/** One event now, then one per `gapMs`: each event reaches the gateway as its own read. */
function sendPaced(res: http.ServerResponse, events: Buffer[], gapMs: number): void {
  let next = 0;
  const tick = () => {
    if (res.destroyed) return;
    res.write(events[next++] as Buffer);
    if (next === events.length) res.end();
    else setTimeout(tick, gapMs);
  };
  tick();
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => answer(req, res, chunks.length === 1 ? (chunks[0] as Buffer).toString('latin1') : Buffer.concat(chunks).toString('latin1')));
});
// Longer than the gateway's idle pools, so connections are reused across phases, not re-opened.
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ type: 'ready', url: `http://127.0.0.1:${port}` });
});
serveParent();
