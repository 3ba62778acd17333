import { fileURLToPath } from 'node:url';
import { RUNTIME_WRAPPER_FILE } from '../../lib/bundle-files.ts';
import { eventually } from '../support/processes.ts';
import { startRealProbe, type RealProbe } from './probe-runtimes.ts';

/**
 * The loopback Runtime API's other paths, driven by the real runtime interface client: a
 * buffered handler's answer and error go through the client's native part (aws-lambda-cpp:
 * `/response`, `/error`), a handler that cannot be loaded through `/init/error`. The streaming
 * path is covered by the other files of this suite.
 */
let real: RealProbe | undefined;

afterEach(async () => {
  await real?.close();
  real = undefined;
});

test('a buffered answer: `/response` with the JSON payload, which the front turns into the HTTP response', async () => {
  real = await startRealProbe('handlers.buffered');
  const response = await real.get('/');
  expect(response.status).toBe(201);
  expect(response.headers).toContainEqual(['content-type', 'text/plain']);
  expect(response.body.toString()).toBe('buffered answer');
  expect(real.lambda.api.outcomes).toEqual([{ requestId: expect.any(String), result: 'ok' }]);
});

test('a buffered handler that throws: `/error` with the error type header and document, logged, and the process serves on', async () => {
  real = await startRealProbe('handlers.buffered');
  const failed = await real.get('/throw');
  expect(failed.status).toBe(502);
  const [outcome] = real.lambda.api.outcomes;
  expect(outcome?.result).toBe('Error');
  expect(JSON.parse(outcome?.detail ?? '{}')).toMatchObject({ errorType: 'Error', errorMessage: 'the buffered handler failed', trace: expect.any(Array) });
  expect(real.lambda.stdout.map((line) => JSON.parse(line))).toContainEqual(expect.objectContaining({ level: 'ERROR', message: expect.objectContaining({ errorMessage: 'the buffered handler failed' }) }));
  expect((await real.get('/')).status).toBe(201);
  expect(real.lambda.starts).toHaveLength(1);
});

test('a handler that does not exist: `/init/error`, the invocation fails with that error, and the process exits', async () => {
  real = await startRealProbe('handlers.missing');
  const failed = await real.get('/');
  expect(failed.status).toBe(502);
  expect(real.lambda.api.initErrors).toEqual([{ errorType: 'Runtime.HandlerNotFound', body: expect.stringContaining('handlers.missing is undefined or not exported') }]);
  expect(real.lambda.api.outcomes[0]?.result).toBe('Runtime.HandlerNotFound');
  await eventually(() => expect(real?.lambda.starts[0]?.exit?.code).not.toBe(0));
});

test.each([
  [256, 12, 231],
  [1769, 88, 1593],
])('at %i MB the runtime process runs with the bootstrap\'s Node flags: %i MB semi-spaces, %i MB of old generation, gc() exposed', async (memoryMb, semiMb, oldMb) => {
  real = await startRealProbe('handlers.handler', { memoryMb });
  const flags = JSON.parse((await real.get('/node-flags')).body.toString()) as { execArgv: string[]; gc: string; heapLimitMb: number };
  expect(flags.execArgv).toEqual(['--expose-gc', '--max-http-header-size', '81920', `--max-semi-space-size=${semiMb}`, `--max-old-space-size=${oldMb}`]);
  expect(flags.gc).toBe('function');
  // V8's limit is the old generation plus the young one's: three semi-spaces, each rounded up to
  // a power of two (12 -> 16, 88 -> 128 MB). Both flags took effect; without them the limit would
  // be V8's own default, from the machine's memory.
  expect(flags.heapLimitMb).toBeGreaterThanOrEqual(oldMb + 3 * semiMb);
  expect(flags.heapLimitMb).toBeLessThanOrEqual(oldMb + 6 * semiMb);
});

test('through the gateway\'s exec wrapper (AWS_LAMBDA_EXEC_WRAPPER, as the stack sets it) the runtime runs with the same flags less --expose-gc', async () => {
  const wrapper = fileURLToPath(new URL(`../../${RUNTIME_WRAPPER_FILE}`, import.meta.url));
  real = await startRealProbe('handlers.handler', { memoryMb: 256, environment: { AWS_LAMBDA_EXEC_WRAPPER: wrapper } });
  const flags = JSON.parse((await real.get('/node-flags')).body.toString()) as { execArgv: string[]; gc: string };
  expect(flags.execArgv).toEqual(['--max-http-header-size', '81920', '--max-semi-space-size=12', '--max-old-space-size=231']);
  expect(flags.gc).toBe('undefined');
  // The same process serves on: the wrapper exec'd node, it did not stay in between.
  expect((await real.get('/')).status).toBe(200);
  expect(real.lambda.starts).toHaveLength(1);
});

test('a wrapper that is not there fails Init, as the bootstrap does (exit 127), and nothing is served', async () => {
  real = await startRealProbe('handlers.handler', { environment: { AWS_LAMBDA_EXEC_WRAPPER: '/var/task/no-such-wrapper.sh' } });
  const failed = await real.get('/');
  expect(failed.status).toBeGreaterThanOrEqual(500);
  await eventually(() => expect(real?.lambda.starts[0]?.exit).toEqual({ code: 127, signal: null }));
  expect(real.lambda.stdout.join('\n')).toContain('/var/task/no-such-wrapper.sh: does not exist');
});
