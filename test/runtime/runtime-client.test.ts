import { execFileSync, execSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { besideBundleCommands, RUNTIME_WRAPPER_FILE } from '../../lib/bundle-files.ts';
import { eventually } from '../support/processes.ts';
import { comparable } from './exchange.ts';
import { startRealProbe, type RealProbe } from './probe-runtimes.ts';

/**
 * The gateway's own runtime client (lambda/runtime-client/) against AWS's (aws-lambda-ric 4.0.2)
 * on the probe handlers, each started as Lambda starts it: the bootstrap runs the gateway's exec
 * wrapper, which runs ours unless GATEWAY_RUNTIME_CLIENT=aws. Both talk to the same loopback
 * Runtime API, which AWS's client proves; what the Function URL's client sees and what Lambda
 * records must be the same. Where ours does better than AWS's, the test says so.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');
type Client = 'gateway' | 'aws';
const CHOICE: Record<Client, Record<string, string>> = { gateway: {}, aws: { GATEWAY_RUNTIME_CLIENT: 'aws' } };

/** The wrapper and the client, built beside each other by the bundling hook's own commands. */
let asset: string;
const probes: RealProbe[] = [];

beforeAll(() => {
  asset = mkdtempSync(join(tmpdir(), 'gateway-runtime-client-'));
  execSync(besideBundleCommands(ROOT, asset, 'node24').join(' && '));
});

afterEach(async () => {
  await Promise.all(probes.splice(0).map((probe) => probe.close()));
});

afterAll(() => rmSync(asset, { recursive: true, force: true }));

async function probe(client: Client, handler = 'handlers.handler', options: { dropConnectionAfterAnswer?: boolean } = {}): Promise<RealProbe> {
  const started = await startRealProbe(handler, { environment: { AWS_LAMBDA_EXEC_WRAPPER: join(asset, 'runtime-wrapper.sh'), ...CHOICE[client] }, ...options });
  probes.push(started);
  return started;
}

const both = async (handler = 'handlers.handler') => ({ ours: await probe('gateway', handler), theirs: await probe('aws', handler) });

test('the wrapper runs our client, and AWS\'s when told to; each is handed the same context and trace header', async () => {
  const { ours, theirs } = await both();
  const [fromOurs, fromTheirs] = [JSON.parse((await ours.get('/context')).body.toString()), JSON.parse((await theirs.get('/context')).body.toString())];
  expect(fromOurs.client).toBe(join(asset, 'runtime-client.mjs'));
  expect(fromTheirs.client).toMatch(/aws-lambda-ric\/index\.mjs$/);
  for (const [context, lambda] of [[fromOurs, ours.lambda], [fromTheirs, theirs.lambda]] as const) {
    expect(context.awsRequestId).toBe(lambda.api.outcomes[0]?.requestId);
    expect(context.xRayTraceId).toBe(context.traceId);
    expect(context.traceId).toMatch(/^Root=1-[0-9a-f]{8}-[0-9a-f]{24};Parent=[0-9a-f]{16};Sampled=0$/);
    expect(context.remainingMs).toBeGreaterThan(5_000);
    expect(context.remainingMs).toBeLessThanOrEqual(10_000);
  }
  const same = ({ invokedFunctionArn, functionName, functionVersion, memoryLimitInMB, logGroupName, logStreamName }: Record<string, unknown>) => ({ invokedFunctionArn, functionName, functionVersion, memoryLimitInMB, logGroupName, logStreamName });
  expect(same(fromOurs)).toEqual(same(fromTheirs));
  expect(same(fromOurs).functionName).toBe('gateway-ric');
});

test('a healthy answer and an 8 MiB one, written with backpressure: the same bytes from both, and the same process serves on', async () => {
  const { ours, theirs } = await both();
  for (const path of ['/ok', '/large', '/ok']) {
    const [a, b] = [await ours.get(path), await theirs.get(path)];
    expect(a.status).toBe(200);
    expect(a.complete).toBe(true);
    expect(a.body.length).toBe(path === '/large' ? 8 * 2 ** 20 : b.body.length);
    expect(comparable({ ...a, body: Buffer.from(a.body.toString().replace(/\d+/, 'N')) })).toEqual(comparable({ ...b, body: Buffer.from(b.body.toString().replace(/\d+/, 'N')) }));
  }
  for (const probe of [ours, theirs]) {
    expect(probe.lambda.api.outcomes.map((outcome) => outcome.result)).toEqual(['ok', 'ok', 'ok']);
    expect(probe.lambda.starts).toHaveLength(1);
  }
});

test('a handler that rejects after its stream started: the client gets the first chunk and a cut body, Lambda the error in the trailers, from both', async () => {
  const { ours, theirs } = await both();
  const [a, b] = [await ours.get('/rejects-after-start'), await theirs.get('/rejects-after-start')];
  expect({ body: a.body.toString(), complete: a.complete }).toEqual({ body: 'first chunk\n', complete: false });
  expect(comparable(a)).toEqual(comparable(b));
  for (const probe of [ours, theirs]) {
    const outcome = probe.lambda.api.outcomes.at(-1);
    expect(outcome?.result).toBe('Error');
    expect(JSON.parse(outcome?.detail ?? '{}')).toMatchObject({ errorType: 'Error', errorMessage: 'the handler failed after the stream started', trace: expect.any(Array) });
    expect((await probe.get('/ok')).status).toBe(200);
    expect(probe.lambda.starts).toHaveLength(1);
  }
  // Ours logs it as one JSON line of its own; AWS's as its console record.
  expect(ours.lambda.stdout.map((line) => JSON.parse(line))).toContainEqual(expect.objectContaining({ level: 'error', msg: 'invoke error', errorMessage: 'the handler failed after the stream started' }));
});

test('a body that fails under middy: AWS\'s client exits and loses what requestEnd writes; ours reports the error and requestEnd finishes', async () => {
  const { ours, theirs } = await both('handlers.middyHandler');
  const [a, b] = [await ours.get('/'), await theirs.get('/')];
  expect(comparable(a)).toEqual(comparable(b));
  expect({ body: a.body.toString(), complete: a.complete }).toEqual({ body: 'first chunk\n', complete: false });
  await eventually(() => expect(theirs.lambda.starts[0]?.exit).toEqual({ code: 1, signal: null }));
  await eventually(() => expect(ours.lambda.stdout.some((line) => line.includes('written by requestEnd'))).toBe(true));
  expect(ours.lambda.api.outcomes.at(-1)).toMatchObject({ result: 'Error', detail: expect.stringContaining('the body failed') });
  expect((await ours.get('/')).status).toBe(200);
  expect(ours.lambda.starts).toHaveLength(1);
});

test('ours: a handler that returns without ending its stream fails the invocation at once, where AWS\'s waits for the timeout', async () => {
  const ours = await probe('gateway');
  const started = Date.now();
  const response = await ours.get('/not-ended');
  expect(Date.now() - started).toBeLessThan(5_000);
  expect({ body: response.body.toString(), complete: response.complete }).toEqual({ body: 'started, never ended\n', complete: false });
  expect(ours.lambda.api.outcomes.at(-1)).toMatchObject({ result: 'Error', detail: expect.stringContaining('Response stream is not finished.') });
  expect((await ours.get('/ok')).status).toBe(200);
});

test('ours: an API that closes the kept connection after each acknowledgement, unannounced, costs no invocation and no restart', async () => {
  const ours = await probe('gateway', 'handlers.handler', { dropConnectionAfterAnswer: true });
  for (let i = 0; i < 20; i++) expect((await ours.get('/ok')).status).toBe(200);
  expect(ours.lambda.api.outcomes.map((outcome) => outcome.result)).toEqual(Array(20).fill('ok'));
  expect(ours.lambda.starts).toHaveLength(1);
});

test('a handler that cannot be loaded: `/init/error` with the same error type from both, and the process exits', async () => {
  const { ours, theirs } = await both('handlers.missing');
  for (const probe of [ours, theirs]) {
    expect((await probe.get('/')).status).toBe(502);
    expect(probe.lambda.api.initErrors).toEqual([{ errorType: 'Runtime.HandlerNotFound', body: expect.stringContaining('handlers.missing is undefined or not exported') }]);
    await eventually(() => expect(probe.lambda.starts[0]?.exit?.code).not.toBe(0));
  }
});

test('ours serves streaming handlers only: a buffered one fails Init with a message naming the way back', async () => {
  const ours = await probe('gateway', 'handlers.buffered');
  expect((await ours.get('/')).status).toBe(502);
  expect(ours.lambda.api.initErrors).toEqual([{ errorType: 'Runtime.UnsupportedHandler', body: expect.stringContaining('GATEWAY_RUNTIME_CLIENT=aws') }]);
});

describe('the wrapper\'s choice', () => {
  const wrapper = () => join(asset, 'runtime-wrapper.sh');
  const argsOf = (env: Record<string, string>, args: string[]) => execFileSync(wrapper(), ['/bin/echo', ...args], { env: { PATH: process.env.PATH ?? '', ...env } }).toString().trim();

  test('ours in place of the runtime\'s index.mjs, the flags kept but --expose-gc', () => {
    expect(argsOf({}, ['--expose-gc', '--max-http-header-size', '81920', '/var/runtime/index.mjs'])).toBe(`--max-http-header-size 81920 ${join(asset, 'runtime-client.mjs')}`);
  });

  test.each([
    ['GATEWAY_RUNTIME_CLIENT=aws', { GATEWAY_RUNTIME_CLIENT: 'aws' }, '/var/runtime/index.mjs'],
    ['several invocations per environment (AWS_LAMBDA_MAX_CONCURRENCY)', { AWS_LAMBDA_MAX_CONCURRENCY: '8' }, '/var/runtime/index.mjs'],
    ['a last argument that is not a runtime\'s index.mjs', {}, '/var/runtime/other.js'],
  ])('AWS\'s with %s', (_name, env, entry) => {
    expect(argsOf(env, ['--expose-gc', entry])).toBe(entry);
  });

  test('AWS\'s when our client is not beside the wrapper', () => {
    const alone = mkdtempSync(join(tmpdir(), 'gateway-wrapper-alone-'));
    try {
      execSync(`cp "${ROOT}/${RUNTIME_WRAPPER_FILE}" "${alone}/" && chmod 755 "${alone}/runtime-wrapper.sh"`);
      expect(execFileSync(join(alone, 'runtime-wrapper.sh'), ['/bin/echo', '/var/runtime/index.mjs']).toString().trim()).toBe('/var/runtime/index.mjs');
    } finally {
      rmSync(alone, { recursive: true, force: true });
    }
  });
});
