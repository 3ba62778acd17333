/**
 * The head of an HTTP/1.1 answer (RFC 9112 sections 4-6): the status, how its body is framed
 * and whether the socket may carry another call. The framing headers are looked up directly;
 * the full header list is parsed only for whoever asks (`headerPairs`: the upstream client, not
 * the AWS calls, whose dozen headers nobody reads).
 */
export interface AnswerHead {
  status: number;
  statusText: string;
  /** Where the body starts in the received bytes. */
  start: number;
  /** Content-Length, or -1 when the body is chunked or runs to the connection's close. */
  length: number;
  chunked: boolean;
  /** `Connection: close`, HTTP/1.0, or a body framed by the close: the socket carries no other call. */
  close: boolean;
  /** The server's `Keep-Alive: timeout=`, in ms. */
  keepAliveMs?: number;
  /** The header lines after the status line, as received (latin1), each ending in `\r\n`. */
  lines: string;
}

/** Bounds on what a server may make the gateway hold. */
export const MAX_HEAD_BYTES = 64 * 1024;

/** The head once it has all arrived (interim 1xx heads skipped), else undefined; throws on what is not HTTP/1.x. */
export function parseAnswerHead(received: Buffer): AnswerHead | undefined {
  let from = 0;
  for (;;) {
    const end = received.indexOf('\r\n\r\n', from);
    if (end < 0) {
      if (received.length - from > MAX_HEAD_BYTES) throw new Error('The answer head is too long.');
      return undefined;
    }
    if (end - from > MAX_HEAD_BYTES) throw new Error('The answer head is too long.');
    const head = received.toString('latin1', from, end);
    const statusLine = /^HTTP\/1\.([01]) ([1-5]\d\d)(?: ([^\r\n]*))?(?:\r\n|$)/.exec(head);
    if (statusLine === null) throw new Error(`Not an HTTP/1.x answer: ${JSON.stringify(head.slice(0, 40))}`);
    const status = Number(statusLine[2]);
    if (status === 101) throw new Error('The server switched protocols.');
    // 100 Continue and other interim answers: the final one follows.
    if (status < 200) {
      from = end + 4;
      continue;
    }
    const rest = head.slice(statusLine[0].length);
    const lines = rest === '' ? '' : `${rest}\r\n`;
    return headOf(status, statusLine[3] ?? '', statusLine[1] === '0', lines, end + 4);
  }
}

/**
 * The four headers that frame an answer, looked up in the lower-cased lines: splitting and
 * trimming every line of an AWS answer cost more than the rest of the parse.
 */
function headOf(status: number, statusText: string, http10: boolean, lines: string, start: number): AnswerHead {
  const lower = `\r\n${lines.toLowerCase()}`;
  const answer: AnswerHead = { status, statusText, start, length: -1, chunked: false, close: http10, lines };
  const length = valuesOf(lower, 'content-length');
  if (length.length > 0) {
    const value = length[0] as string;
    if (!/^\d{1,15}$/.test(value) || length.some((other) => other !== value)) throw new Error('An invalid Content-Length in the answer.');
    answer.length = Number(value);
  }
  for (const coding of valuesOf(lower, 'transfer-encoding')) {
    // Only `chunked` alone frames a body this client can read (a compressed one it did not ask for).
    if (coding !== 'chunked') throw new Error(`An answer in a transfer coding not handled: ${coding.slice(0, 40)}.`);
    answer.chunked = true;
  }
  for (const connection of valuesOf(lower, 'connection')) {
    if (/(^|,)\s*close\s*(,|$)/.test(connection)) answer.close = true;
    else if (http10 && /(^|,)\s*keep-alive\s*(,|$)/.test(connection)) answer.close = false;
  }
  const timeout = /(?:^|,)\s*timeout=(\d+)/.exec(valuesOf(lower, 'keep-alive')[0] ?? '');
  if (timeout) answer.keepAliveMs = Number(timeout[1]) * 1000;
  // Transfer-Encoding overrides Content-Length, and an answer with both may be a smuggling attempt: not reused (RFC 9112 6.3).
  if (answer.chunked && answer.length >= 0) {
    answer.length = -1;
    answer.close = true;
  }
  if (status === 204 || status === 304) answer.length = 0;
  if (answer.length < 0 && !answer.chunked) answer.close = true;
  return answer;
}

/** Every value of a header, trimmed, in the lower-cased lines (`\r\n` before each). */
function valuesOf(lower: string, name: string): string[] {
  const values: string[] = [];
  const prefix = `\r\n${name}:`;
  for (let at = lower.indexOf(prefix); at >= 0; at = lower.indexOf(prefix, at + prefix.length)) {
    values.push(lower.slice(at + prefix.length, lower.indexOf('\r\n', at + prefix.length)).trim());
  }
  return values;
}

/** A header name (RFC 9110 token). */
export const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Every header as a name/value pair, in the order received (names as sent, values trimmed): what
 * node:http's rawHeaders gave. A line that is not `name: value` fails the answer, as llhttp does.
 */
export function headerPairs(head: AnswerHead): [string, string][] {
  const pairs: [string, string][] = [];
  const { lines } = head;
  for (let at = 0; at < lines.length; ) {
    const end = lines.indexOf('\r\n', at);
    const colon = lines.indexOf(':', at);
    const name = colon < 0 || colon > end ? '' : lines.slice(at, colon);
    if (!TOKEN.test(name)) throw new Error('A malformed header line in the answer.');
    pairs.push([name, lines.slice(colon + 1, end).trim()]);
    at = end + 2;
  }
  return pairs;
}
