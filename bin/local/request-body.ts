import type http from 'node:http';
import { bodyTooLarge, GatewayError } from '../../lambda/errors.ts';
import { tooManyBodies } from '../../lambda/formats/request-body.ts';

/**
 * Bytes of request bodies held at once by the local server, counted as they arrive (never as
 * announced: a head announcing 32 MB holds nothing until the bytes come), together with what the
 * handler makes of them (bin/local/function-url-server.ts gives it `bodyMemory`), until their
 * invocation ends. A request that would take the total over the cap is refused (503), so a burst
 * of large uploads cannot exhaust memory.
 */
export class BodyBudget {
  readonly limit: number;
  #used = 0;

  constructor(limit: number) {
    this.limit = limit;
  }

  get used(): number {
    return this.#used;
  }

  /** Takes `bytes` more, or returns false (and takes nothing) when that would exceed the cap. */
  take(bytes: number): boolean {
    if (this.#used + bytes > this.limit) return false;
    this.#used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.#used = Math.max(0, this.#used - bytes);
  }
}

export interface BodyLimits {
  maxBodyBytes: number;
  /** Longest silence between body bytes. */
  idleTimeoutMs: number;
  budget: BodyBudget;
}

/** How reading a body ended: the bytes (and what they hold of the budget), a refusal to answer, or a client that left. */
export type BodyResult = { kind: 'body'; body: Buffer; held: number } | { kind: 'refused'; error: GatewayError; held: number } | { kind: 'gone'; held: number };

/** True when the request announces a body (a length above 0 or chunked transfer). */
export function announcesBody(req: http.IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Reads a request body within the limits. The announced length is checked before a byte is read
 * (413, with the true size); the budget is taken as bytes arrive (503 when exhausted), so what a
 * slow or stalled upload holds is what it sent; silence longer than the idle timeout is a 408.
 * Whatever happens, the promise resolves: a client that resets mid-upload is `gone`, never an
 * exception. The caller gives back `held` to the budget when the invocation ends.
 */
export function readRequestBody(req: http.IncomingMessage, limits: BodyLimits): Promise<BodyResult> {
  const announced = Number(req.headers['content-length'] ?? Number.NaN);
  if (announced > limits.maxBodyBytes) return Promise.resolve({ kind: 'refused', error: bodyTooLarge(announced, limits.maxBodyBytes), held: 0 });
  let held = 0;
  return new Promise<BodyResult>((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    let idle: ReturnType<typeof setTimeout> | undefined;
    const settle = (result: BodyResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(idle);
      req.off('data', onData).off('end', onEnd).off('close', onClose).off('error', onClose);
      // Whatever is left unread is not buffered: the answer says "connection: close".
      if (result.kind !== 'body') req.pause();
      resolve(result);
    };
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => settle({ kind: 'refused', error: new GatewayError('request_timeout', `No request body bytes arrived for ${Math.round(limits.idleTimeoutMs / 1000)} s.`), held }), limits.idleTimeoutMs);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limits.maxBodyBytes) return settle({ kind: 'refused', error: bodyTooLarge(undefined, limits.maxBodyBytes), held });
      if (!limits.budget.take(chunk.length)) return settle({ kind: 'refused', error: tooManyBodies(), held });
      held = size;
      chunks.push(chunk);
      armIdle();
    };
    const onEnd = () => settle({ kind: 'body', body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size), held });
    const onClose = () => settle({ kind: 'gone', held });
    req.on('data', onData).on('end', onEnd).on('close', onClose).on('error', onClose);
    armIdle();
  });
}
