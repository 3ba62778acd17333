import { parseAnswerHead, readAnswerBody } from '../../../lambda/aws/answer-framing.ts';

const bytes = (text: string) => Buffer.from(text, 'latin1');
const answer = (text: string) => {
  const head = parseAnswerHead(bytes(text));
  if (head === undefined) throw new Error('no head');
  return { head, body: readAnswerBody(head, bytes(text), false)?.bytes.toString('latin1') };
};

describe('answer framing', () => {
  test('Content-Length frames the body; the head waits for its blank line', () => {
    expect(parseAnswerHead(bytes('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n'))).toBeUndefined();
    expect(answer('HTTP/1.1 200 OK\r\nX-Amzn-RequestId: a\r\nContent-Length: 2\r\n\r\n{}')).toMatchObject({ head: { status: 200, length: 2, close: false }, body: '{}' });
    expect(answer('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n{}').body).toBeUndefined();
  });

  test('interim 1xx heads are skipped; a protocol switch, a non-HTTP answer and a foreign coding are refused', () => {
    expect(answer('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 400 Bad\r\ncontent-length: 0\r\n\r\n').head.status).toBe(400);
    expect(() => parseAnswerHead(bytes('HTTP/1.1 101 Switching\r\n\r\n'))).toThrow(/switched protocols/);
    expect(() => parseAnswerHead(bytes('HTTP/2 200\r\n\r\n'))).toThrow(/Not an HTTP\/1.x answer/);
    expect(() => parseAnswerHead(bytes('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n'))).toThrow(/transfer coding/);
  });

  test('two different Content-Lengths are refused; Transfer-Encoding with Content-Length is read chunked and the socket not kept', () => {
    expect(() => parseAnswerHead(bytes('HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-length: 3\r\n\r\n'))).toThrow(/Content-Length/);
    expect(() => parseAnswerHead(bytes('HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n'))).toThrow(/Content-Length/);
    expect(answer('HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n')).toMatchObject({ head: { chunked: true, close: true }, body: '{}' });
  });

  test('chunked: extensions and trailers skipped, a malformed chunk refused', () => {
    expect(answer('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3;x=y\r\n{"a\r\n3\r\n":1\r\n1\r\n}\r\n0\r\nTrailer: t\r\n\r\n').body).toBe('{"a":1}');
    expect(answer('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\n{"a').body).toBeUndefined();
    expect(() => answer('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n')).toThrow(/malformed chunk/);
    expect(() => answer('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\nabc\r\n')).toThrow(/malformed chunk/);
  });

  test('who closes: Connection: close, HTTP/1.0 unless keep-alive, a body framed by the close; Keep-Alive timeout read', () => {
    expect(answer('HTTP/1.1 200 OK\r\nConnection: Close\r\ncontent-length: 0\r\n\r\n').head.close).toBe(true);
    expect(answer('HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n').head.close).toBe(true);
    expect(answer('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\ncontent-length: 0\r\n\r\n').head.close).toBe(false);
    const byClose = parseAnswerHead(bytes('HTTP/1.1 200 OK\r\n\r\nabc')) as NonNullable<ReturnType<typeof parseAnswerHead>>;
    expect(byClose.close).toBe(true);
    expect(readAnswerBody(byClose, bytes('HTTP/1.1 200 OK\r\n\r\nabc'), false)).toBeUndefined();
    expect(readAnswerBody(byClose, bytes('HTTP/1.1 200 OK\r\n\r\nabc'), true)?.bytes.toString()).toBe('abc');
    expect(answer('HTTP/1.1 204 No Content\r\n\r\n')).toMatchObject({ head: { length: 0, close: false }, body: '' });
    expect(answer('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=100\r\ncontent-length: 0\r\n\r\n').head.keepAliveMs).toBe(5000);
  });

  test('bounded: a head without end, an answer too large', () => {
    expect(() => parseAnswerHead(Buffer.alloc(70 * 1024, 'a'))).toThrow(/too long/);
    expect(() => parseAnswerHead(bytes('HTTP/1.1 200 OK\r\ncontent-length: 99999999999\r\n\r\n'))).toThrow(/too large/);
  });
});
