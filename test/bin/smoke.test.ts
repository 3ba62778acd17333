import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runSmokeChecks, type CheckResult } from '../../bin/local/smoke-checks.ts';
import { judgeDelivery } from '../../bin/local/smoke-delivery.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';
import { startGateway, type Harness } from '../support/gateway-harness.ts';
import { sendJson, sendSse, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SIMULATOR_CONFIG = { upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }] };
const MODELS = { messagesModel: 'sim-claude', responsesModel: 'sim-gpt' };

const CHECK_NAMES = [
  'request without a key is refused (401)',
  'GET /first/v1/models',
  'POST /first/v1/messages (sim-claude)',
  'POST /first/v1/messages, stream (sim-claude)',
  'POST /second/v1/responses (sim-gpt)',
  'POST /second/v1/responses, stream (sim-gpt)',
  'streaming delivery (gateway-smoke-paced: the simulator paced)',
];
const DELIVERY = CHECK_NAMES[6] as string;

function byName(results: CheckResult[]): Record<string, CheckResult> {
  return Object.fromEntries(results.map((result) => [result.name, result]));
}

function smokeCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/smoke.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env }, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
  });
}

describe('smoke checks against the local gateway', () => {
  let harness: Harness;
  let key: string;
  beforeAll(async () => {
    harness = await startGateway({ config: SIMULATOR_CONFIG });
    ({ key } = await harness.issueKey());
  });
  afterAll(() => harness.close());

  test('pass on a working gateway: both formats, buffered and streamed, and the 401', async () => {
    const results = await runSmokeChecks({ url: `${harness.url}/`, key, ...MODELS });
    expect(results.map((result) => result.name)).toEqual(CHECK_NAMES);
    expect(results.filter((result) => !result.passed)).toEqual([]);
    // This gateway's simulator is not paced: the delivery check has nothing to measure against.
    expect(byName(results)[DELIVERY]).toMatchObject({ skipped: true, detail: expect.stringContaining('not answered by a paced simulator') });
    const checks = byName(results);
    expect(checks['request without a key is refused (401)']?.detail).toBe('status 401');
    expect(checks['POST /first/v1/messages, stream (sim-claude)']?.detail).toMatch(/events ending with message_stop/);
    expect(checks['POST /second/v1/responses, stream (sim-gpt)']?.detail).toMatch(/events ending with response\.completed/);
  });

  test('report every authenticated check as failed when the key is wrong', async () => {
    const results = byName(await runSmokeChecks({ url: harness.url, key: 'gwk_not-issued-here', ...MODELS }));
    expect(results['request without a key is refused (401)']?.passed).toBe(true);
    for (const name of CHECK_NAMES.slice(1, 6)) {
      expect(results[name]).toMatchObject({ passed: false, detail: expect.stringContaining('expected status 200, got 401') });
    }
    expect(results[DELIVERY]).toMatchObject({ passed: false, detail: expect.stringContaining('expected status 200, got 401') });
  });

  test('the CLI prints each result and exits 0 when all pass, 1 when one fails', async () => {
    const passing = await smokeCli(['--url', harness.url, '--messages-model', 'sim-claude', '--responses-model', 'sim-gpt'], { GATEWAY_API_KEY: key });
    expect(passing.code).toBe(0);
    expect(passing.stdout).toContain('PASS  POST /second/v1/responses, stream (sim-gpt)');
    expect(passing.stdout).toContain(`SKIP  ${DELIVERY}`);
    expect(passing.stdout).toContain('6 passed, 0 failed, 1 skipped');

    const failing = await smokeCli(['--url', harness.url, '--key', 'gwk_not-issued-here']);
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain('FAIL  GET /first/v1/models');
    expect(failing.stdout).toContain('1 passed, 6 failed');
  });

  test('the CLI refuses to run without a URL or a key', async () => {
    const result = await smokeCli(['--url', harness.url], { GATEWAY_API_KEY: '' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--key is required');
  });
});

describe('smoke checks against a broken gateway', () => {
  let broken: UpstreamStub;
  beforeAll(async () => {
    broken = await startUpstream();
  });
  afterAll(() => broken.close());

  test('fail with what was wrong: no auth, wrong shapes, streams without their terminal event', async () => {
    // Answers everything, key or not; streams stop before their last event.
    broken.reply((request, res) => {
      const streaming = request.body !== '' && JSON.parse(request.body).stream === true;
      const reply = streaming
        ? sendSse(['event: message_start\ndata: {"type":"message_start"}\n\n', 'event: response.created\ndata: {"type":"response.created"}\n\n'])
        : sendJson(200, { ok: true });
      return reply(request, res);
    });
    const results = byName(await runSmokeChecks({ url: broken.url, key: 'gwk_any', ...MODELS }));
    expect(Object.values(results).filter((result) => result.name !== DELIVERY).every((result) => !result.passed)).toBe(true);
    expect(results[DELIVERY]).toMatchObject({ skipped: true });
    expect(results['request without a key is refused (401)']?.detail).toBe('expected status 401, got 200');
    expect(results['GET /first/v1/models']?.detail).toBe('the body has no "data" list');
    expect(results['POST /first/v1/messages (sim-claude)']?.detail).toBe('expected a "message" object, got type undefined');
    expect(results['POST /first/v1/messages, stream (sim-claude)']?.detail).toBe('no message_stop event among 2 event(s); last: response.created');
    expect(results['POST /second/v1/responses, stream (sim-gpt)']?.detail).toBe('no response.completed event among 2 event(s); last: response.created');
  });

  test('fail a stream that carries an error event, and a non-stream content type', async () => {
    broken.reply((request, res) =>
      request.body.includes('"stream":true')
        ? sendSse('event: error\ndata: {"type":"error","error":{"message":"upstream overloaded"}}\n\n')(request, res)
        : sendJson(200, '<html>', { 'content-type': 'text/html' })(request, res),
    );
    const results = byName(await runSmokeChecks({ url: broken.url, key: 'gwk_any', ...MODELS }));
    expect(results['POST /first/v1/messages, stream (sim-claude)']?.detail).toContain('the stream carried an error event: {"type":"error","error":{"message":"upstream overloaded"}}');
    expect(results['POST /second/v1/responses (sim-gpt)']?.detail).toBe('expected content-type application/json, got text/html');
  });

  test('report an unreachable gateway as failed requests, not a crash', async () => {
    const results = await runSmokeChecks({ url: 'http://127.0.0.1:9', key: 'gwk_any', timeoutMs: 2_000, ...MODELS });
    expect(results).toHaveLength(CHECK_NAMES.length);
    for (const result of results) expect(result.detail).toMatch(/^request failed: fetch failed/);
  });
});

/**
 * The delivery check against local targets: the simulator paces one event per 100 ms; a TCP hop
 * that holds back writes under 8 KB for 600 ms stands in for a Function URL that delays small
 * writes. Generous on purpose: an event counts as held back only when it arrives less than 50 ms
 * after the one before (the hop holds them twelve times as long).
 */
describe('streaming delivery', () => {
  const PACED = { upstreams: { sim: { type: 'simulator' }, paced: { type: 'simulator', delayMs: 100 } }, routes: [{ model: 'gateway-smoke-paced', upstream: 'paced' }, { model: '*', upstream: 'sim' }] };
  let plain: Harness;
  let padded: Harness;
  let keys: { plain: string; padded: string };
  beforeAll(async () => {
    plain = await startGateway({ config: PACED });
    padded = await startGateway({ config: PACED, settings: { streamPadBytes: 8_192 } });
    keys = { plain: (await plain.issueKey()).key, padded: (await padded.issueKey()).key };
  });
  afterAll(async () => {
    await plain.close();
    await padded.close();
  });
  const hold = { untilBytes: 8_192, holdMs: 600 };

  test('a path that delivers writes as they come: passes, gaps at the simulator\'s pace', async () => {
    const result = byName(await runSmokeChecks({ url: plain.url, key: keys.plain, ...MODELS }))[DELIVERY];
    expect(result).toMatchObject({ passed: true, detail: expect.stringMatching(/^delivered as written: .* one every 100 ms/) });
    expect(result?.detail).not.toContain('padded');
  });

  test('a hop that holds back small writes: fails, and says what to set', async () => {
    const holding = await startTcpProxy(plain.url, { holdSmallWrites: hold });
    try {
      const results = byName(await runSmokeChecks({ url: holding.url, key: keys.plain, ...MODELS }));
      expect(results[DELIVERY]).toMatchObject({ passed: false, detail: expect.stringContaining('HOLDS BACK small writes') });
      expect(results[DELIVERY]?.detail).toContain('tuning.streamPadBytes');
      // The other checks only see slower answers.
      expect(Object.values(results).filter((result) => !result.passed).map((result) => result.name)).toEqual([DELIVERY]);
    } finally {
      await holding.close();
    }
  });

  test('the same hop with GATEWAY_STREAM_PAD_BYTES at its threshold: every write leaves at once, and clients read the same events', async () => {
    const holding = await startTcpProxy(padded.url, { holdSmallWrites: hold });
    try {
      const results = await runSmokeChecks({ url: holding.url, key: keys.padded, ...MODELS });
      expect(results.filter((result) => !result.passed)).toEqual([]);
      expect(byName(results)[DELIVERY]?.detail).toMatch(/^delivered as written: .*writes padded/);
    } finally {
      await holding.close();
    }
  });

  test('the CLI takes --paced-model, and skips the check when that model is not routed', async () => {
    const result = await smokeCli(['--url', plain.url, '--paced-model', 'no-such-model', '--messages-model', 'sim-claude', '--responses-model', 'sim-gpt'], { GATEWAY_API_KEY: keys.plain });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('SKIP  streaming delivery (no-such-model: the simulator paced)');
  });
});

describe('judgeDelivery', () => {
  const paced = (count: number, gap: number, first = 5) => Array.from({ length: count }, (_, i) => first + i * gap);

  test('events at the pace they were written: delivered as written', () => {
    expect(judgeDelivery({ gapMs: 100, headersMs: 4, eventsMs: paced(30, 100), paddingBytes: 0 })).toMatchObject({ asWritten: true });
    // One stall (a GC pause on the client) is jitter, not a pattern.
    const stalled = paced(30, 100);
    stalled[10] = (stalled[11] as number) - 2;
    expect(judgeDelivery({ gapMs: 100, headersMs: 4, eventsMs: stalled, paddingBytes: 0 }).asWritten).toBe(true);
  });

  test('events leaving in bursts, or a first event held until later ones: held back', () => {
    // The first event on time, then the rest in bursts of ten a second apart.
    const bursts = paced(30, 100).map((_, i) => 5 + Math.ceil(i / 10) * 1_000);
    expect(judgeDelivery({ gapMs: 100, headersMs: 4, eventsMs: bursts, paddingBytes: 0 })).toMatchObject({ asWritten: false, summary: expect.stringContaining('were held back') });
    expect(judgeDelivery({ gapMs: 100, headersMs: 4, eventsMs: paced(30, 100, 900), paddingBytes: 0 })).toMatchObject({ asWritten: false, summary: expect.stringContaining('the first event waited') });
  });
});

