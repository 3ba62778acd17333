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
