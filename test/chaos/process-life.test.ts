import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { nodeFlagsOf, npmStartNodeFlags } from '../../bench/processes.ts';
import { importGraph, RUNTIME_ENTRIES } from '../support/import-graph.ts';
import { childEnv, firstKey, runKeys, tempDir, until } from '../support/processes.ts';
import { ChaosGateway } from './support/gateway.ts';
import { expectBelow } from './support/measure.ts';

/**
 * Issue 20, item 1: process life. Today `kill <pid of npm>` (what systemd, Docker and most
 * process managers do) leaves `node bin/dev-server.ts` running, still listening and holding the
 * key store; the next start then dies with dynalite's "Database is closed" stack trace, and a
 * second start on a busy port with an unhandled EADDRINUSE trace.
 */
const ROOT = new URL('../../', import.meta.url).pathname;
const CONFIG = { upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }] };
const GRACE_MS = 2_000;

/** A process's output and exit, as a test needs them. */
function watch(child: ChildProcess): { output: () => string; stderr: () => string; exited: Promise<{ code: number | null; at: number }> } {
  let output = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => ((output += chunk), (stderr += chunk)));
  return { output: () => output, stderr: () => stderr, exited: new Promise((resolve) => child.once('exit', (code) => resolve({ code, at: Date.now() }))) };
}

/** How these tests wait on a process: every 25 ms, its output in the failure. */
const waitingOn = (run: { output: () => string }, timeoutMs: number) => ({ timeoutMs, everyMs: 25, detail: () => `output:\n${run.output()}` });

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function ask(url: string, key: string, text: string): Promise<number> {
  const response = await fetch(`${url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-life', max_tokens: 8, messages: [{ role: 'user', content: text }] }) });
  await response.arrayBuffer();
  return response.status;
}

/** `npm run`'s own path when the suite runs under npm (CI), else npm from PATH. */
function npm(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const cli = process.env.npm_execpath;
  return cli && cli.endsWith('.js') ? spawn(process.execPath, [cli, ...args], { cwd: ROOT, env }) : spawn('npm', args, { cwd: ROOT, env });
}

describe('1. the process a manager signals, npm or node, stops the gateway', () => {
  // SIGKILL: npm cannot pass it on; the gateway sees its parent gone.
  test.each(['SIGTERM', 'SIGINT', 'SIGKILL'] as const)('%s to npm: the gateway writes its usage, frees the data folder and the port, and exits', async (signal) => {
    const dataDir = tempDir('gateway-life-');
    const config = join(tempDir('gateway-life-config-'), 'config.json');
    writeFileSync(config, JSON.stringify(CONFIG));
    const child = npm(['start'], childEnv({ PORT: '0', GATEWAY_DATA_DIR: dataDir, GATEWAY_CONFIG: config, GATEWAY_SHUTDOWN_GRACE_MS: String(GRACE_MS) }));
    const run = watch(child);
    let gatewayPid: number | undefined;
    try {
      await until(() => run.output().includes('\nReady.'), 'npm start to be ready', waitingOn(run, 20_000));
      const url = /Gateway listening on (http:\/\/\S+)/.exec(run.output())?.[1] as string;
      gatewayPid = JSON.parse(readFileSync(join(dataDir, 'lock.json'), 'utf8')).pid as number;
      expect(gatewayPid).not.toBe(child.pid);
      const key = firstKey(run.output());
      for (const text of ['one', 'two', 'three']) expect(await ask(url, key, text)).toBe(200);

      const signalledAt = Date.now();
      child.kill(signal);
      await until(() => !alive(gatewayPid as number), `the gateway (pid ${gatewayPid}) to exit after ${signal} to npm`, waitingOn(run, GRACE_MS + 8_000));
      expectBelow(Date.now() - signalledAt, GRACE_MS + 5_000, `ms from ${signal} to npm until the gateway had exited`);
      expect(existsSync(join(dataDir, 'lock.json'))).toBe(false);
      const { port } = new URL(url);
      await expect(new Promise((resolve, reject) => net.connect(Number(port), '127.0.0.1').once('connect', resolve).once('error', reject))).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      const usage = await runKeys(['usage', '--since', '2d', '--json'], { GATEWAY_DATA_DIR: dataDir });
      expect(JSON.parse(usage.stdout).keys.map((entry: { requests: number }) => entry.requests)).toEqual([3]);
    } finally {
      child.kill('SIGKILL');
      if (gatewayPid !== undefined && alive(gatewayPid)) process.kill(gatewayPid, 'SIGKILL');
    }
  });
});

describe('1. a second instance refuses at once, in one line saying who holds what', () => {
  let gateway: ChaosGateway;

  beforeAll(async () => {
    gateway = await ChaosGateway.start({ config: CONFIG });
  });

  afterAll(() => gateway?.stop());

  /** `node bin/dev-server.ts` with `env`: its exit code, its output and how long it took. */
  async function second(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
    const started = Date.now();
    const child = spawn(process.execPath, ['bin/dev-server.ts'], { cwd: ROOT, env: childEnv({ GATEWAY_CONFIG: gateway.env.GATEWAY_CONFIG as string, ...env }) });
    const run = watch(child);
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const { code, at } = await run.exited;
    clearTimeout(timer);
    return { code, stdout: run.output().slice(0, run.output().length - run.stderr().length), stderr: run.stderr(), ms: at - started };
  }

  test('on the same data folder: it names the running gateway and what to do; the first keeps serving', async () => {
    const result = await second({ GATEWAY_DATA_DIR: gateway.dataDir, PORT: '0' });
    expect({ code: result.code, lines: result.stderr.trim().split('\n') }).toEqual({
      code: 1,
      lines: [`The data folder ${gateway.dataDir} is already served by the gateway (pid ${gateway.pid}, ${gateway.url}). Stop that one first (kill ${gateway.pid}), or give this one its own GATEWAY_DATA_DIR.`],
    });
    expectBelow(result.ms, 5_000, 'ms until the second instance had exited');
    await gateway.probe('after a second instance on its data folder');
  });

  test('on the same port: it names the process listening there and what to do; the first keeps serving', async () => {
    const { port } = new URL(gateway.url);
    const result = await second({ GATEWAY_DATA_DIR: tempDir('gateway-life-other-'), PORT: port });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      `Port ${port} on 127.0.0.1 is already in use by pid ${gateway.pid} (${process.execPath} bin/dev-server.ts). Stop that process, or start with another PORT (PORT=0 picks a free one).`,
    ]);
    expectBelow(result.ms, 5_000, 'ms until the second instance had exited');
    await gateway.probe('after a second instance on its port');
  });
});

describe('1. the systemd unit and the container of docs/single-host.md work as written', () => {
  const doc = readFileSync(join(ROOT, 'docs/single-host.md'), 'utf8');
  const block = (language: string): string => {
    const found = new RegExp(`\`\`\`${language}\n([^]*?)\`\`\``).exec(doc)?.[1];
    if (found === undefined) throw new Error(`docs/single-host.md has no ${language} block`);
    return found;
  };

  /**
   * Runs a documented command line in the repository with the documented environment, as the
   * service would (only the port and the data folder are the test's own, and the program `node`
   * is this one): it must serve a keyed request, then exit 0 within `stopMs` of `signal`.
   */
  async function serveAndStop(argv: string[], env: Record<string, string>, signal: NodeJS.Signals, stopMs: number): Promise<void> {
    const [program, ...args] = argv;
    expect(program === 'node' || program === '/usr/bin/node').toBe(true);
    const dataDir = tempDir('gateway-documented-');
    const child = spawn(process.execPath, args, { cwd: ROOT, env: childEnv({ ...env, PORT: '0', GATEWAY_DATA_DIR: dataDir }) });
    const run = watch(child);
    try {
      await until(() => run.output().includes('\nReady.'), 'the documented command to be ready', waitingOn(run, 20_000));
      const url = /Gateway listening on (http:\/\/\S+)/.exec(run.output())?.[1] as string;
      expect(await ask(url, firstKey(run.output()), 'documented')).toBe(200);
      const signalledAt = Date.now();
      child.kill(signal);
      const { code, at } = await run.exited;
      expect(code).toBe(0);
      expectBelow(at - signalledAt, stopMs, `ms from ${signal} to the exit`);
    } finally {
      child.kill('SIGKILL');
    }
  }

  test("the unit's ExecStart, with its Environment, serves and stops on its KillSignal within TimeoutStopSec", async () => {
    const service = block('ini').split('[Service]')[1]?.split('\n[')[0] ?? '';
    const directive = (name: string) => new RegExp(`^${name}=(.*)$`, 'm').exec(service)?.[1] as string;
    expect(directive('WorkingDirectory')).toBe('/opt/agent-gateway');
    const env = Object.fromEntries(directive('Environment').split(' ').map((pair) => pair.split('=') as [string, string]));
    expect(env).toMatchObject({ HOST: '127.0.0.1', GATEWAY_DATA_DIR: '/var/lib/agent-gateway' });
    expect(directive('StateDirectory')).toBe('agent-gateway');
    // The documented commands run Node as npm start does (memory and CPU per request, docs/single-host.md).
    expect(nodeFlagsOf(directive('ExecStart').split(' '))).toEqual(npmStartNodeFlags());
    await serveAndStop(directive('ExecStart').split(' '), env, directive('KillSignal') as NodeJS.Signals, Number(directive('TimeoutStopSec')) * 1000);
  });

  test('the image copies every folder the entry points load, and its CMD, with its ENV, serves and stops on its STOPSIGNAL', async () => {
    const dockerfile = block('Dockerfile');
    const copied = new Set([...dockerfile.matchAll(/^COPY (.+) \S+$/gm)].flatMap((match) => (match[1] as string).split(' ')));
    expect(dockerfile).toMatch(/^RUN npm ci --omit=dev$/m);
    const loaded = new Set(Object.keys(importGraph(RUNTIME_ENTRIES).inputs).map((file) => file.split('/')[0] as string));
    expect([...loaded].filter((folder) => !copied.has(folder))).toEqual([]);
    for (const file of ['package.json', 'package-lock.json', '.npmrc']) expect(copied.has(file)).toBe(true);
    const env = Object.fromEntries((/^ENV (.+)$/m.exec(dockerfile)?.[1] as string).split(' ').map((pair) => pair.split('=') as [string, string]));
    expect(env).toMatchObject({ HOST: '0.0.0.0', GATEWAY_DATA_DIR: '/data' });
    const cmd = JSON.parse(/^CMD (.+)$/m.exec(dockerfile)?.[1] as string) as string[];
    expect(nodeFlagsOf(cmd)).toEqual(npmStartNodeFlags());
    const signal = /^STOPSIGNAL (\w+)$/m.exec(dockerfile)?.[1] as NodeJS.Signals;
    // Listening on loopback only here (tests reach nothing beyond it); in the container HOST=0.0.0.0.
    await serveAndStop(cmd, { ...env, HOST: '127.0.0.1' }, signal, 15_000);
  });
});
