import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { portsOf } from '../../bin/local/port-holder.ts';
import { runKeys } from '../support/processes.ts';
import { ChaosGateway } from './support/gateway.ts';

/**
 * Issue 19, item 4: the embedded store answers only the gateway and its CLI. Today dynalite checks
 * no signature, its port is in a world-readable file, and it answers CORS `*`: any local user, or
 * a web page open in a browser on the machine, can put a key of their choosing or erase a key's
 * spend. The attacker here is a second process that does not hold the store's secret and finds
 * its port as any local user can (the gateway process's listening sockets).
 */
let gateway: ChaosGateway;

beforeAll(async () => {
  gateway = await ChaosGateway.start({ config: { upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }] } });
});

afterAll(() => gateway?.stop());

beforeEach(() => gateway.ensureRunning());

interface Attempt {
  attempt: string;
  status: number;
  cors: string[];
}

/** Runs test/chaos/support/store-intruder.ts against `port` in its own process. */
function intrude(port: number): Promise<Attempt[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['test/chaos/support/store-intruder.ts', String(port)], { cwd: new URL('../../', import.meta.url).pathname });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => (code === 0 ? resolve(output.trim().split('\n').map((line) => JSON.parse(line) as Attempt)) : reject(new Error(`the intruder exited ${code}:\n${output}`))));
  });
}

test('4. a second process that knows only the store port is refused every operation, and a web page gets no CORS header', async () => {
  const gatewayPort = Number(new URL(gateway.url).port);
  const storePorts = portsOf(gateway.pid).filter((port) => port !== gatewayPort);
  expect(storePorts).toHaveLength(1);
  const attempts = await intrude(storePorts[0] as number);
  expect(attempts.length).toBeGreaterThanOrEqual(20);
  const letThrough = attempts.filter((attempt) => attempt.status !== 403 || attempt.cors.length > 0);
  expect(letThrough).toEqual([]);
  // Nothing changed: the only key is the first one, and it still works.
  const listed = await runKeys(['list', '--json'], { GATEWAY_DATA_DIR: gateway.dataDir });
  expect(JSON.parse(listed.stdout).map((record: { name: string }) => record.name)).toEqual(['default']);
  await gateway.probe('after the intruder');
});

test("4. the data folder is its owner's only: the store's folder 0700, every file 0600, the key never in the output", async () => {
  await gateway.probe('so that usage is written');
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const modes: Record<string, string> = {};
  const walk = (path: string, name: string) => {
    const stats = statSync(path);
    modes[name] = (stats.mode & 0o777).toString(8);
    if (stats.isDirectory()) for (const entry of readdirSync(path)) walk(join(path, entry), `${name}/${entry}`);
  };
  walk(gateway.dataDir, '.');
  const expected = Object.fromEntries(Object.entries(modes).map(([name]) => [name, statSync(join(gateway.dataDir, name)).isDirectory() ? '700' : '600']));
  expect(modes).toEqual(expected);
  expect(Object.keys(modes)).toEqual(expect.arrayContaining(['./dynamodb', './lock.json', './first-key.txt']));
  // Issue 19, item 12: the output is a log here (a pipe): the key went to the 0600 file only.
  expect(gateway.server.output()).not.toContain('gwk_');
});
