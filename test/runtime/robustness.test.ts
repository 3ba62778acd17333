import { eventually } from '../support/processes.ts';
import { comparable } from './exchange.ts';
import { startRealProbe, startStandInProbe, type RealProbe, type StandInProbe } from './probe-runtimes.ts';

/**
 * What each runtime does when a streaming handler fails after its response started. These pin
 * what the real runtime interface client (aws-lambda-ric 4.0.2) does; where `npm start` differs
 * in a way that matters, the comparison is a `test.failing` naming the difference.
 */
let real: RealProbe;
let standIn: StandInProbe;

/** Fresh processes for each test, running the fixture export `name` on both runtimes. */
function probesOf(name: string): void {
  beforeEach(async () => {
    real = await startRealProbe(`handlers.${name}`);
    standIn = await startStandInProbe(name);
  });
  afterEach(async () => {
    await real.close();
    await standIn.close();
  });
}

const pidOf = (body: Buffer) => Number(/ok from process (\d+)/.exec(body.toString())?.[1]);

describe('a response stream that errors (its source fails after the first chunk; pipeline() destroys the stream)', () => {
  probesOf('handler');
  test('the client of either runtime gets the head and the first chunk, then a response without its end', async () => {
    const [fromReal, fromStandIn] = [await real.get('/body-errors'), await standIn.get('/body-errors')];
    expect(fromReal.status).toBe(200);
    expect(fromReal.body.toString()).toBe('first chunk\n');
    expect(fromReal.complete).toBe(false);
    expect(comparable(fromReal)).toEqual(comparable(fromStandIn));
  });

  test('real runtime: the client process exits on the unhandled rejection, and the next request starts a new one (cold start)', async () => {
    const warm = pidOf((await real.get('/ok')).body);
    await real.get('/body-errors');
    await eventually(() => expect(real.lambda.starts[0]?.exit).toEqual({ code: 1, signal: null }));
    // The runtime dies before posting anything else: the invocation ends torn, not with error trailers.
    expect(real.lambda.api.outcomes.at(-1)?.result).toBe('Runtime.StreamTruncated');
    expect(real.lambda.stderr.join('\n')).toMatch(/triggerUncaughtException[\s\S]*Error: the body failed/);
    const next = await real.get('/ok');
    expect(next.status).toBe(200);
    expect(pidOf(next.body)).not.toBe(warm);
    expect(real.lambda.starts).toHaveLength(2);
  });

  test('npm start: the process survives and serves the next request itself', async () => {
    const warm = pidOf((await standIn.get('/ok')).body);
    await standIn.get('/body-errors');
    const next = await standIn.get('/ok');
    expect(pidOf(next.body)).toBe(warm);
    expect(standIn.exit()).toBeUndefined();
  });
});

describe('a handler that rejects after its stream started (the stream itself is healthy)', () => {
  probesOf('handler');
  test('the client of either runtime gets the head and the first chunk, then a response without its end', async () => {
    const [fromReal, fromStandIn] = [await real.get('/rejects-after-start'), await standIn.get('/rejects-after-start')];
    expect(fromReal.status).toBe(200);
    expect(fromReal.body.toString()).toBe('first chunk\n');
    expect(fromReal.complete).toBe(false);
    expect(comparable(fromReal)).toEqual(comparable(fromStandIn));
  });

  test('real runtime: the error goes to Lambda in the stream trailers and to the log, and the same process serves on', async () => {
    const warm = pidOf((await real.get('/ok')).body);
    await real.get('/rejects-after-start');
    const outcome = real.lambda.api.outcomes.at(-1);
    expect(outcome?.result).toBe('Error');
    expect(JSON.parse(outcome?.detail ?? '{}')).toMatchObject({ errorType: 'Error', errorMessage: 'the handler failed after the stream started' });
    const logged = real.lambda.stdout.map((line) => JSON.parse(line)).find((entry) => entry.level === 'ERROR');
    expect(logged).toMatchObject({ message: { errorType: 'Error', errorMessage: 'the handler failed after the stream started' } });
    expect(pidOf((await real.get('/ok')).body)).toBe(warm);
    expect(real.lambda.starts).toHaveLength(1);
  });

  // The local server neither errors a stream nobody listens to nor destroys it: the response is
  // cut off (as the Function URL does when the runtime reports an error) and it keeps serving.
  test('npm start keeps serving after it, as the real runtime does', async () => {
    await standIn.get('/rejects-after-start');
    // Time for a crash to happen before the next request (no bound is asserted on it).
    await new Promise((resolve) => setTimeout(resolve, 300));
    const next = await standIn.get('/ok');
    expect(next.status).toBe(200);
    expect(standIn.exit()).toBeUndefined();
  });
});

describe('the same failing body returned through middy, as the gateway returns its streams', () => {
  probesOf('middyHandler');
  const lineOf = (output: string) => output.split('\n').find((line) => line.includes('written by requestEnd'));

  test('real runtime: the process exits before requestEnd finishes, so its work (the gateway: usage record and log line) is lost', async () => {
    const response = await real.get('/');
    expect(response.body.toString()).toBe('first chunk\n');
    expect(response.complete).toBe(false);
    await eventually(() => expect(real.lambda.starts[0]?.exit).toEqual({ code: 1, signal: null }));
    expect(lineOf(real.lambda.stdout.join('\n'))).toBeUndefined();
  });

  test('npm start: requestEnd runs to the end and the line is written', async () => {
    const response = await standIn.get('/');
    expect(response.body.toString()).toBe('first chunk\n');
    await eventually(() => expect(lineOf(standIn.output())).toBeDefined());
    expect(standIn.exit()).toBeUndefined();
  });
});
