import { headerPairs, parseAnswerHead, type AnswerHead } from '../../../lambda/http1/answer-head.ts';
import { BodyFramer } from '../../../lambda/http1/body-framer.ts';

const bytes = (text: string) => Buffer.from(text, 'latin1');

/** The head, then the body framed from the given pieces (each pushed as a socket read would be), and where it ended. */
function frame(text: string, pieces: number[] = []) {
  const received = bytes(text);
  const head = parseAnswerHead(received);
  if (head === undefined) throw new Error('no head');
  const framer = new BodyFramer(head);
  const rest = received.subarray(head.start);
  const body: Buffer[] = [];
  let end = framer.done ? 0 : -1;
  let offset = 0;
  for (const size of [...pieces, rest.length]) {
    if (end >= 0 || offset >= rest.length) break;
    const piece = rest.subarray(offset, Math.min(rest.length, offset + size));
    const at = framer.push(piece, (data) => body.push(Buffer.from(data)));
    if (at >= 0) end = offset + at;
    offset += piece.length;
  }
  return { head, framer, body: end >= 0 || framer.endsAtClose ? Buffer.concat(body).toString('latin1') : undefined, end, pieces: body.length };
}

describe('answer head', () => {
  test('Content-Length frames the body; the head waits for its blank line; status text kept', () => {
    expect(parseAnswerHead(bytes('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n'))).toBeUndefined();
    expect(frame('HTTP/1.1 200 OK\r\nX-Amzn-RequestId: a\r\nContent-Length: 2\r\n\r\n{}')).toMatchObject({ head: { status: 200, statusText: 'OK', length: 2, close: false }, body: '{}', end: 2 });
    expect(frame('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n{}').end).toBe(-1);
  });

  test('interim 1xx heads are skipped; a protocol switch, a non-HTTP answer and a foreign coding are refused', () => {
    expect(frame('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 400 Bad\r\ncontent-length: 0\r\n\r\n').head.status).toBe(400);
    expect(() => parseAnswerHead(bytes('HTTP/1.1 101 Switching\r\n\r\n'))).toThrow(/switched protocols/);
    expect(() => parseAnswerHead(bytes('HTTP/2 200\r\n\r\n'))).toThrow(/Not an HTTP\/1.x answer/);
    expect(() => parseAnswerHead(bytes('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n'))).toThrow(/transfer coding/);
  });

  test('two different Content-Lengths are refused; Transfer-Encoding with Content-Length is read chunked and the socket not kept', () => {
    expect(() => parseAnswerHead(bytes('HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-length: 3\r\n\r\n'))).toThrow(/Content-Length/);
    expect(() => parseAnswerHead(bytes('HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n'))).toThrow(/Content-Length/);
    expect(frame('HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n')).toMatchObject({ head: { chunked: true, close: true }, body: '{}' });
  });

  test('who closes: Connection: close, HTTP/1.0 unless keep-alive, a body framed by the close; Keep-Alive timeout read', () => {
    expect(frame('HTTP/1.1 200 OK\r\nConnection: Close\r\ncontent-length: 0\r\n\r\n').head.close).toBe(true);
    expect(frame('HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n').head.close).toBe(true);
    expect(frame('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\ncontent-length: 0\r\n\r\n').head.close).toBe(false);
    const byClose = frame('HTTP/1.1 200 OK\r\n\r\nabc');
    expect(byClose).toMatchObject({ head: { close: true }, end: -1, body: 'abc' });
    expect(byClose.framer.endsAtClose).toBe(true);
    expect(frame('HTTP/1.1 204 No Content\r\n\r\n')).toMatchObject({ head: { length: 0, close: false }, body: '', end: 0 });
    expect(frame('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=100\r\ncontent-length: 0\r\n\r\n').head.keepAliveMs).toBe(5000);
  });

  test('header pairs: names as sent, values trimmed, in order; a line without a name refused; none at all is fine', () => {
    const head = parseAnswerHead(bytes('HTTP/1.1 429 Too Many\r\nRetry-After:  3 \r\nx-a: 1\r\nX-A: 2\r\ncontent-length: 0\r\n\r\n')) as AnswerHead;
    expect(head.statusText).toBe('Too Many');
    expect(headerPairs(head)).toEqual([['Retry-After', '3'], ['x-a', '1'], ['X-A', '2'], ['content-length', '0']]);
    expect(headerPairs(parseAnswerHead(bytes('HTTP/1.1 200\r\n\r\n')) as AnswerHead)).toEqual([]);
    expect(() => headerPairs(parseAnswerHead(bytes('HTTP/1.1 200 OK\r\nno colon here\r\n\r\n')) as AnswerHead)).toThrow(/malformed header/);
    expect(() => headerPairs(parseAnswerHead(bytes('HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n')) as AnswerHead)).toThrow(/malformed header/);
  });

  test('bounded: a head without end, a head too long', () => {
    expect(() => parseAnswerHead(Buffer.alloc(70 * 1024, 'a'))).toThrow(/too long/);
    expect(() => parseAnswerHead(bytes(`HTTP/1.1 200 OK\r\nx: ${'a'.repeat(70 * 1024)}\r\n\r\n`))).toThrow(/too long/);
  });
});

describe('body framer', () => {
  const chunked = 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3;x=y\r\n{"a\r\n3\r\n":1\r\n1\r\n}\r\n0\r\nTrailer: t\r\n\r\n';

  test('chunked: extensions and trailers skipped, a malformed chunk refused', () => {
    expect(frame(chunked).body).toBe('{"a":1}');
    expect(frame('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\n{"a').end).toBe(-1);
    expect(() => frame('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n')).toThrow(/malformed chunk/);
    expect(() => frame('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\nabc\r\n')).toThrow(/malformed chunk/);
    expect(() => frame(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${'0'.repeat(2000)}`)).toThrow(/malformed chunk/);
  });

  test('chunked, split byte by byte: the same body, each piece handed on as it came, the end found exactly', () => {
    const whole = frame(chunked);
    const split = frame(chunked, Array(200).fill(1));
    expect(split.body).toBe(whole.body);
    expect(split.end).toBe(whole.end);
    expect(split.pieces).toBe(7);
  });

  test('bytes past the answer are not its body: the end is where they start', () => {
    const result = frame('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}HTTP/1.1 200 OK');
    expect(result).toMatchObject({ body: '{}', end: 2 });
    const afterChunks = frame('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\nextra');
    expect(afterChunks).toMatchObject({ body: '{}', end: 12 });
  });

  test('a Content-Length body in pieces: each handed on, nothing past the length', () => {
    const result = frame('HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nabcdefgh', [2, 2]);
    expect(result).toMatchObject({ body: 'abcdef', end: 6, pieces: 3 });
  });
});
