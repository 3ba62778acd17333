/**
 * One node:http request over an in-memory connection, answered at once: no network, no DNS.
 *
 * On Lambda the upstream call is the process's only node:http request (the AWS calls use
 * aws/kept-alive-post.ts), so the first use of Node's HTTP client (its functions compiled, its
 * parser set up) would land in the first invocation, at the memory size's CPU share: at 256 MB
 * that put about 60 ms back on the on-demand cold start (docs/performance.md). handler.ts runs
 * this during Init, at a full vCPU. Never fails: a warm-up that goes wrong only means the first
 * request pays as before.
 */
export function warmHttpClient(): Promise<void> {
  const http = process.getBuiltinModule('node:http');
  const { Duplex } = process.getBuiltinModule('node:stream');
  return new Promise<void>((resolve) => {
    let answered = false;
    const connection = new Duplex({
      read() {},
      write(_chunk, _encoding, done) {
        // Head and body may come as two writes: one answer only.
        if (!answered) this.push('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
        answered = true;
        done();
      },
    });
    const finish = () => {
      connection.destroy();
      resolve();
    };
    const request = http.request({ host: 'warm-up.invalid', path: '/', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '2' }, createConnection: () => connection }, (response) => {
      response.on('data', () => {});
      response.once('end', finish);
      response.once('error', finish);
    });
    request.once('error', finish);
    request.end('{}');
  });
}
