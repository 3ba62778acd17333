import http from 'node:http';

export type Family = 'messages' | 'responses';

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json(): any;
}

/** One request with node:http (no retries, no connection reuse), the whole answer read. `path` is sent exactly as given. */
export function send(url: string, path: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; timeoutMs?: number } = {}): Promise<Answer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, path, method: options.method ?? 'POST', headers: options.headers, agent: false, timeout: options.timeoutMs ?? 15_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer to ${options.method ?? 'POST'} ${path} within ${options.timeoutMs ?? 15_000} ms`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Headers of an authenticated JSON request, with the credential each format's clients send. */
export function jsonHeaders(key: string | undefined, family: Family = 'messages'): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key !== undefined) {
    if (family === 'messages') headers['x-api-key'] = key;
    else headers.authorization = `Bearer ${key}`;
  }
  return headers;
}

export function messagesBody(model: string, text = 'hello', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model, max_tokens: 64, messages: [{ role: 'user', content: text }], ...extra };
}

export function responsesBody(model: string, text = 'hello', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model, input: text, ...extra };
}

export function bodyFor(family: Family, model: string, text = 'hello', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return family === 'messages' ? messagesBody(model, text, extra) : responsesBody(model, text, extra);
}

/**
 * An error answer in the format the path speaks, with the status and error type asked for:
 * Messages `{"type":"error","error":{"type","message"}}`, Responses `{"error":{"message","type",...}}`.
 * Fails with the whole answer in the message when it is anything else.
 */
export function expectError(answer: { status: number; text: string }, family: Family, status: number, type?: string): { type: string; message: string; code?: string; param?: string } {
  let body: any;
  try {
    body = JSON.parse(answer.text);
  } catch {
    throw new Error(`expected a JSON ${family} error with status ${status}, got ${answer.status} with a body that is not JSON: ${printable(answer.text)}`);
  }
  const error = family === 'messages' ? (body?.type === 'error' ? body.error : undefined) : body?.type === undefined ? body?.error : undefined;
  const shapeOk = typeof error?.type === 'string' && typeof error?.message === 'string';
  if (answer.status !== status || !shapeOk || (type !== undefined && error.type !== type)) {
    throw new Error(`expected ${status}${type ? ` ${type}` : ''} in the ${family} error format, got ${answer.status}: ${printable(answer.text)}`);
  }
  return error;
}

/** Fails with the answer (status and the start of the body) unless it has `status`. */
export function expectStatus(answer: { status: number; text: string }, status: number, what = 'the answer'): void {
  if (answer.status !== status) throw new Error(`expected ${what} to be ${status}, got ${answer.status}: ${printable(answer.text)}`);
}

/** The start of a body with control and non-ASCII bytes escaped, fit for a test failure message. */
export function printable(text: string, max = 500): string {
  return JSON.stringify(text.slice(0, max)).replace(/[^\x20-\x7e]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
