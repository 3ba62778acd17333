import type { AddressInfo } from 'node:net';
import { installAwsLambdaGlobal } from '../../bin/local/awslambda-shim.ts';
import { createFunctionUrlServer, type StreamingHandler } from '../../bin/local/function-url-server.ts';

/**
 * The probe handler (fixtures/handlers.mjs) behind the local stand-in that `npm start` uses
 * (bin/local/function-url-server.ts), in a process of its own so that a crash shows as one.
 * `node test/runtime/stand-in-server.ts [export]` prints "listening on <url>".
 */
installAwsLambdaGlobal();
const name = process.argv[2] ?? 'handler';
const fixture = new URL('./fixtures/handlers.mjs', import.meta.url).href;
const handler = ((await import(fixture)) as Record<string, StreamingHandler>)[name];
if (handler === undefined) throw new Error(`fixtures/handlers.mjs exports no ${name}`);
const server = createFunctionUrlServer(handler, { maxBodyBytes: 1_000_000, functionTimeoutMs: 60_000 });
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`));
