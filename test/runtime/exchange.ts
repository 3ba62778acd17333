import http from 'node:http';

export interface Request {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** One HTTP exchange as the client saw it, byte for byte, with arrival times. */
export interface Exchange {
  status: number;
  /** Raw header pairs, names lower-cased, in arrival order. */
  headers: [string, string][];
  body: Buffer;
  /** False when the response stopped without its end (no terminating chunk). */
  complete: boolean;
  /** When the head arrived, and each body chunk (epoch ms). */
  headAt: number;
  chunks: { at: number; bytes: Buffer }[];
}

/** Sends one request with node:http (fetch hides truncation and arrival times). */
export function exchange(baseUrl: string, request: Request): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}${request.path}`, { method: request.method ?? 'POST', headers: request.headers, agent: false }, (res) => {
      const headAt = Date.now();
      const headers: [string, string][] = [];
      for (let i = 0; i < res.rawHeaders.length; i += 2) headers.push([(res.rawHeaders[i] as string).toLowerCase(), res.rawHeaders[i + 1] as string]);
      const chunks: { at: number; bytes: Buffer }[] = [];
      let settled = false;
      const settle = (complete: boolean) => {
        if (settled) return;
        settled = true;
        resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks.map((chunk) => chunk.bytes)), complete, headAt, chunks });
      };
      res.on('data', (bytes: Buffer) => chunks.push({ at: Date.now(), bytes }));
      res.on('end', () => settle(true));
      res.on('aborted', () => settle(false));
      res.on('error', () => settle(false));
      res.on('close', () => settle(res.complete));
    });
    req.on('error', reject);
    req.end(request.body);
  });
}

/** Headers that name one request or one moment; everything else must match exactly. */
const PER_REQUEST_HEADERS = new Set(['date', 'request-id', 'x-request-id']);

/**
 * What must be equal between the two runtimes: status, headers and body bytes, with per-request
 * ids (`req_…`, the simulator's `msg_sim…`, Responses item ids) and timestamps masked.
 */
export function comparable(result: Exchange): { status: number; headers: [string, string][]; body: string; complete: boolean } {
  return {
    status: result.status,
    headers: result.headers.filter(([name]) => !PER_REQUEST_HEADERS.has(name)),
    body: maskIds(result.body.toString('utf8')),
    complete: result.complete,
  };
}

export function maskIds(text: string): string {
  return text
    .replace(/\b(req|msg|resp|rs|fc|call|item|toolu)_[A-Za-z0-9]{8,}/g, '$1_<id>')
    .replace(/"(created_at|completed_at|created)":\d+/g, '"$1":<time>');
}
