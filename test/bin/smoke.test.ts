import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runSmokeChecks, type CheckResult } from '../../bin/local/smoke-checks.ts';
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
];

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
    const checks = byName(results);
    expect(checks['request without a key is refused (401)']?.detail).toBe('status 401');
    expect(checks['POST /first/v1/messages, stream (sim-claude)']?.detail).toMatch(/events ending with message_stop/);
    expect(checks['POST /second/v1/responses, stream (sim-gpt)']?.detail).toMatch(/events ending with response\.completed/);
  });

  test('report every authenticated check as failed when the key is wrong', async () => {
    const results = byName(await runSmokeChecks({ url: harness.url, key: 'gwk_not-issued-here', ...MODELS }));
    expect(results['request without a key is refused (401)']?.passed).toBe(true);
    for (const name of CHECK_NAMES.slice(1)) {
      expect(results[name]).toMatchObject({ passed: false, detail: expect.stringContaining('expected status 200, got 401') });
    }
  });

  test('the CLI prints each result and exits 0 when all pass, 1 when one fails', async () => {
    const passing = await smokeCli(['--url', harness.url, '--messages-model', 'sim-claude', '--responses-model', 'sim-gpt'], { GATEWAY_API_KEY: key });
    expect(passing.code).toBe(0);
    expect(passing.stdout).toContain('PASS  POST /second/v1/responses, stream (sim-gpt)');
    expect(passing.stdout).toContain('6 passed, 0 failed');

    const failing = await smokeCli(['--url', harness.url, '--key', 'gwk_not-issued-here']);
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain('FAIL  GET /first/v1/models');
    expect(failing.stdout).toContain('1 passed, 5 failed');
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
    expect(Object.values(results).every((result) => !result.passed)).toBe(true);
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
