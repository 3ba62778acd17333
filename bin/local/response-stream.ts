import type http from 'node:http';
import type { AbandonReason } from '../../lambda/request-state.ts';
import { PRELUDE_CONTENT_TYPE } from '../../lambda/runtime-client/response-stream.ts';
import { LocalResponseStream, type ResponseMetadata } from './awslambda-shim.ts';

/**
 * The runtime's response stream: the metadata `HttpResponseStream.from` was given becomes the
 * HTTP head, as a Function URL makes it of the prelude, before the first body byte.
 */
export function responseStream(res: http.ServerResponse, stallTimeoutMs: number, leave: (reason: AbandonReason) => void): LocalResponseStream {
  const write = (chunk: Buffer, done: () => void) => {
    if (chunk.length === 0 || res.destroyed) return done();
    if (res.write(chunk)) return done();
    // A client that reads nothing for this long is as good as gone: free the upstream and the memory.
    const stalled = setTimeout(() => leave('client_stalled'), stallTimeoutMs);
    const resume = () => {
      clearTimeout(stalled);
      res.off('drain', resume).off('close', resume);
      done();
    };
    res.on('drain', resume).on('close', resume);
  };
  let headSent = false;
  const sendHead = () => {
    headSent = true;
    if (res.destroyed) return;
    const metadata = stream.contentType === PRELUDE_CONTENT_TYPE ? stream.metadata : undefined;
    if (metadata === undefined) res.writeHead(200, { 'content-type': stream.contentType });
    else res.writeHead(metadata.statusCode ?? 200, headOf(metadata));
  };
  const stream = new LocalResponseStream((chunk, done) => {
    if (!headSent) {
      sendHead();
      // The head, the first body bytes and, for a whole answer that ends in this event-loop turn,
      // the chunked body's terminator leave in one write (the end's own write was one more
      // syscall per non-streamed request, docs/performance.md); a stream's head and first event
      // leave when the turn ends, its later writes are not held. The socket is corked, not the
      // response: a corked response holds its chunks back and its `end()` sends the terminator
      // before them (Node 24.21). `end()` uncorks the socket fully, so the later `uncork()` then
      // finds nothing left to release.
      const socket = res.destroyed ? null : res.socket;
      socket?.cork();
      setImmediate(() => {
        if (!res.headersSent && !res.destroyed) res.flushHeaders();
        socket?.uncork();
      });
    }
    write(chunk, done);
  });
  // Errors of this stream are the handler's to see (middy's pipeline rejects with them); an
  // 'error' nobody listens to would otherwise stop the whole process.
  stream.on('error', () => {});
  stream.on('finish', () => {
    if (!headSent && stream.metadata !== undefined) sendHead();
    if (!res.destroyed) res.end();
  });
  return stream;
}

/**
 * The head's fields as the prelude's JSON would carry them: a header whose value is undefined is
 * left out (JSON drops it; node:http would refuse it), cookies as `set-cookie`.
 */
function headOf({ headers = {}, cookies = [] }: ResponseMetadata): http.OutgoingHttpHeaders {
  const head: http.OutgoingHttpHeaders = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined) head[name] = value;
  }
  if (cookies.length > 0) head['set-cookie'] = cookies;
  return head;
}
