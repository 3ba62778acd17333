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
    const head = received.toString('latin1', from, end);
    const statusLine = /^HTTP\/1\.([01]) ([1-5]\d\d)(?: |\r|$)/.exec(head);
    if (statusLine === null) throw new Error(`Not an HTTP/1.x answer: ${JSON.stringify(head.slice(0, 40))}`);
    const status = Number(statusLine[2]);
    if (status === 101) throw new Error('The server switched protocols.');
    // 100 Continue and other interim answers: the final one follows.
    if (status < 200) {
      from = end + 4;
      continue;
    }
    return headOf(status, statusLine[1] === '0', `${head.toLowerCase()}\r\n`, end + 4);
  }
}

/**
 * The four headers that frame an answer, looked up in the lower-cased head (`\r\n` after each
 * line): an AWS answer has a dozen others, and splitting and trimming each line cost more than
 * the rest of the parse.
 */
function headOf(status: number, http10: boolean, head: string, start: number): AnswerHead {
  const answer: AnswerHead = { status, start, length: -1, chunked: false, close: http10 };
  const length = valuesOf(head, 'content-length');
  if (length.length > 0) {
    const value = length[0] as string;
    if (!/^\d{1,15}$/.test(value) || length.some((other) => other !== value)) throw new Error('An invalid Content-Length in the answer.');
    answer.length = Number(value);
  }
  for (const coding of valuesOf(head, 'transfer-encoding')) {
    // Only `chunked` alone frames a body this client can read (a compressed one it did not ask for).
    if (coding !== 'chunked') throw new Error(`An answer in a transfer coding not handled: ${coding.slice(0, 40)}.`);
    answer.chunked = true;
  }
  for (const connection of valuesOf(head, 'connection')) {
    if (/(^|,)\s*close\s*(,|$)/.test(connection)) answer.close = true;
    else if (http10 && /(^|,)\s*keep-alive\s*(,|$)/.test(connection)) answer.close = false;
  }
  const timeout = /(?:^|,)\s*timeout=(\d+)/.exec(valuesOf(head, 'keep-alive')[0] ?? '');
  if (timeout) answer.keepAliveMs = Number(timeout[1]) * 1000;
  // Transfer-Encoding overrides Content-Length, and an answer with both may be a smuggling attempt: not reused (RFC 9112 6.3).
  if (answer.chunked && answer.length >= 0) {
    answer.length = -1;
    answer.close = true;
  }
  if (status === 204 || status === 304) answer.length = 0;
  if (answer.length > MAX_BODY_BYTES) throw new Error('The answer is too large.');
  if (answer.length < 0 && !answer.chunked) answer.close = true;
  return answer;
}

/** Every value of a header, trimmed, in the lower-cased head. */
function valuesOf(head: string, name: string): string[] {
  const values: string[] = [];
  const prefix = `\r\n${name}:`;
  for (let at = head.indexOf(prefix); at >= 0; at = head.indexOf(prefix, at + prefix.length)) {
    values.push(head.slice(at + prefix.length, head.indexOf('\r\n', at + prefix.length)).trim());
  }
  return values;
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
