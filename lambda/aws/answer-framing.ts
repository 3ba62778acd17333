/**
 * HTTP/1.1 answer framing (RFC 9112 sections 4-7), as far as kept-alive-post.ts needs it: the
 * status, where the body ends (Content-Length, chunked, or the connection's close) and whether
 * the socket may carry another call. Anything else in the head is skipped, not interpreted.
 */
export interface AnswerHead {
  status: number;
  /** Where the body starts in the received bytes. */
  start: number;
  /** Content-Length, or -1 when the body is chunked or runs to the connection's close. */
  length: number;
  chunked: boolean;
  /** `Connection: close`, HTTP/1.0, or a body framed by the close: the socket carries no other call. */
  close: boolean;
  /** The server's `Keep-Alive: timeout=`, in ms. */
  keepAliveMs?: number;
}

/** Bounds on what a server may make the gateway hold: a head, an answer (a BatchGetItem answer is at most 16 MB). */
const MAX_HEAD_BYTES = 64 * 1024;
const MAX_BODY_BYTES = 32 * 1024 * 1024;

/** The head once it has all arrived (interim 1xx heads skipped), else undefined; throws on what is not HTTP/1.x. */
export function parseAnswerHead(received: Buffer): AnswerHead | undefined {
  let from = 0;
  for (;;) {
    const end = received.indexOf('\r\n\r\n', from);
    if (end < 0) {
      if (received.length - from > MAX_HEAD_BYTES) throw new Error('The answer head is too long.');
      return undefined;
    }
    const lines = received.toString('latin1', from, end).split('\r\n');
    const statusLine = /^HTTP\/1\.([01]) ([1-5]\d\d)(?: |$)/.exec(lines[0] as string);
    if (statusLine === null) throw new Error(`Not an HTTP/1.x answer: ${JSON.stringify((lines[0] as string).slice(0, 40))}`);
    const status = Number(statusLine[2]);
    if (status === 101) throw new Error('The server switched protocols.');
    // 100 Continue and other interim answers: the final one follows.
    if (status < 200) {
      from = end + 4;
      continue;
    }
    return headOf(status, statusLine[1] === '0', lines, end + 4);
  }
}

function headOf(status: number, http10: boolean, lines: string[], start: number): AnswerHead {
  const head: AnswerHead = { status, start, length: -1, chunked: false, close: http10 };
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error('A malformed header line in the answer.');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'content-length') {
      if (!/^\d{1,15}$/.test(value) || (head.length >= 0 && head.length !== Number(value))) throw new Error('An invalid Content-Length in the answer.');
      head.length = Number(value);
    } else if (name === 'transfer-encoding') {
      // Only `chunked` alone frames a body this client can read (a compressed one it did not ask for).
      if (value.toLowerCase() !== 'chunked') throw new Error(`An answer in a transfer coding not handled: ${value.slice(0, 40)}.`);
      head.chunked = true;
    } else if (name === 'connection') {
      if (/(^|,)\s*close\s*(,|$)/i.test(value)) head.close = true;
      else if (http10 && /(^|,)\s*keep-alive\s*(,|$)/i.test(value)) head.close = false;
    } else if (name === 'keep-alive') {
      const timeout = /(?:^|,)\s*timeout=(\d+)/i.exec(value);
      if (timeout) head.keepAliveMs = Number(timeout[1]) * 1000;
    }
  }
  // Transfer-Encoding overrides Content-Length, and an answer with both may be a smuggling attempt: not reused (RFC 9112 6.3).
  if (head.chunked && head.length >= 0) {
    head.length = -1;
    head.close = true;
  }
  if (status === 204 || status === 304) head.length = 0;
  if (head.length > MAX_BODY_BYTES) throw new Error('The answer is too large.');
  if (head.length < 0 && !head.chunked) head.close = true;
  return head;
}

/**
 * The body once it has all arrived, and where it ends; undefined while more is to come.
 * `closed`: the connection has closed, which ends a body framed by it and fails any other.
 */
export function readAnswerBody(head: AnswerHead, received: Buffer, closed: boolean): { bytes: Buffer; end: number } | undefined {
  if (head.chunked) return dechunk(received, head.start);
  if (head.length >= 0) {
    const end = head.start + head.length;
    return received.length >= end ? { bytes: received.subarray(head.start, end), end } : undefined;
  }
  if (received.length - head.start > MAX_BODY_BYTES) throw new Error('The answer is too large.');
  return closed ? { bytes: received.subarray(head.start), end: received.length } : undefined;
}

function dechunk(received: Buffer, start: number): { bytes: Buffer; end: number } | undefined {
  const parts: Buffer[] = [];
  let size = 0;
  for (let at = start; ; ) {
    const lineEnd = received.indexOf('\r\n', at);
    if (lineEnd < 0) {
      if (received.length - at > 1024) throw new Error('A malformed chunk in the answer.');
      return undefined;
    }
    const sizeText = received.toString('latin1', at, lineEnd).split(';')[0]?.trim() ?? '';
    if (!/^[0-9a-fA-F]{1,8}$/.test(sizeText)) throw new Error('A malformed chunk in the answer.');
    const chunkSize = parseInt(sizeText, 16);
    if (chunkSize === 0) {
      // The last chunk, then trailers (skipped) up to an empty line.
      const end = received.indexOf('\r\n\r\n', lineEnd);
      if (end < 0) {
        if (received.length - lineEnd > MAX_HEAD_BYTES) throw new Error('The answer trailers are too long.');
        return undefined;
      }
      return { bytes: parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts), end: end + 4 };
    }
    size += chunkSize;
    if (size > MAX_BODY_BYTES) throw new Error('The answer is too large.');
    const dataStart = lineEnd + 2;
    if (received.length < dataStart + chunkSize + 2) return undefined;
    if (received[dataStart + chunkSize] !== 13 || received[dataStart + chunkSize + 1] !== 10) throw new Error('A malformed chunk in the answer.');
    parts.push(received.subarray(dataStart, dataStart + chunkSize));
    at = dataStart + chunkSize + 2;
  }
}
