import type { AddressInfo } from 'node:net';
import { installAwsLambdaGlobal } from '../../bin/local/awslambda-shim.ts';
import { createFunctionUrlServer, type StreamingHandler } from '../../bin/local/function-url-server.ts';

/**
 * The probe handler (fixtures/handlers.mjs) behind the local stand-in that `npm start` uses
 * (bin/local/function-url-server.ts), in a process of its own so that a crash shows as one.
 * Prints "listening on <url>".
 */
installAwsLambdaGlobal();
const fixture = new URL('./fixtures/handlers.mjs', import.meta.url).href;
const { handler } = (await import(fixture)) as { handler: StreamingHandler };
const server = createFunctionUrlServer(handler, { maxBodyBytes: 1_000_000, functionTimeoutMs: 60_000 });
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`));
