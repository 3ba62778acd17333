import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXPECTED_LOOKUPS, joinResults, readCells, readProbes, renderTable, TABLE_DOC, writeConformanceTable } from './conformance.ts';
import { startDnsWatch } from './dns-watch.ts';
import { networkInterfaces } from './isolation.ts';

/**
 * `npm run test:clients` (and `npm run conformance`, which adds --write-table):
 *
 * 1. Re-runs itself inside a fresh network namespace with only loopback up (`unshare -n` as
 *    root, `unshare -rn` otherwise), so neither the CLIs nor anything else can leave the machine.
 *    A DNS watcher on the resolver address notes any name looked up (a phone-home attempt).
 * 2. Runs the client suite with its jest config, results as JSON.
 * 3. Prints the conformance table; with --write-table, rewrites the section of docs/testing.md
 *    between the conformance markers. Exits with jest's status.
 *
 * Extra arguments go to jest (e.g. `npm run test:clients -- -t 'Codex'`).
 */
const ROOT = new URL('../../', import.meta.url).pathname;
const args = process.argv.slice(2);
const writeTable = args.includes('--write-table');
const jestArgs = args.filter((arg) => arg !== '--write-table');

function enterNamespace(): never {
  const root = process.getuid?.() === 0;
  const unshare = root ? ['-n'] : ['-r', '-n'];
  // Inside: bring loopback up (iproute2's `ip`, else net-tools' `ifconfig`), then run this script again.
  const inner = 'PATH="$PATH:/usr/sbin:/sbin"; if command -v ip >/dev/null 2>&1; then ip link set lo up; elif command -v ifconfig >/dev/null 2>&1; then ifconfig lo up; else echo "test:clients needs ip (iproute2) or ifconfig to bring loopback up" >&2; exit 1; fi && exec "$0" "$@"';
  const result = spawnSync('unshare', [...unshare, '--', '/bin/sh', '-c', inner, process.execPath, ...process.execArgv, new URL(import.meta.url).pathname, ...args], {
    stdio: 'inherit',
    env: { ...process.env, CLIENTS_NETNS: '1' },
  });
  if (result.error) {
    console.error(`test:clients: cannot create a network namespace (${result.error.message}); it needs util-linux unshare and root or unprivileged user namespaces`);
    process.exit(1);
  }
  process.exit(result.status ?? 1);
}

if (process.env.CLIENTS_NETNS !== '1') enterNamespace();
process.env.PATH = `${process.env.PATH ?? ''}:/usr/sbin:/sbin`;

const interfaces = networkInterfaces();
if (interfaces.some((name) => name !== 'lo')) {
  console.error(`test:clients: expected only loopback in the namespace, found ${interfaces.join(', ')}`);
  process.exit(1);
}

const dns = await startDnsWatch();
const resultsDir = mkdtempSync(join(tmpdir(), 'gateway-clients-results-'));
const jestJson = join(resultsDir, 'jest.json');
const started = Date.now();
// Every CLI run and test has its own timeout; this bounds the whole suite on top (CI has 90 min for everything).
const SUITE_TIMEOUT_MS = 20 * 60_000;
const status = await new Promise<number>((resolve) => {
  const child = spawn(
    process.execPath,
    ['--experimental-vm-modules', '--disable-warning=ExperimentalWarning', 'node_modules/jest/bin/jest.js', '-c', 'test/clients/jest.config.js', '--forceExit', '--json', `--outputFile=${jestJson}`, ...jestArgs],
    { cwd: ROOT, stdio: 'inherit', env: { ...process.env, CLIENTS_RESULTS_DIR: resultsDir } },
  );
  const timer = setTimeout(() => {
    console.error(`test:clients: the suite ran over ${SUITE_TIMEOUT_MS / 60_000} minutes; stopping it`);
    child.kill('SIGKILL');
  }, SUITE_TIMEOUT_MS);
  child.on('exit', (code) => {
    clearTimeout(timer);
    resolve(code ?? 1);
  });
});
const seconds = (Date.now() - started) / 1000;
dns.close();

const jest = existsSync(jestJson) ? JSON.parse(readFileSync(jestJson, 'utf8')) : undefined;
const results = joinResults(readCells(resultsDir), jest);
const meta = { date: new Date().toISOString().slice(0, 10), seconds, probes: readProbes(resultsDir), dnsLookups: dns.names() };
console.log(`\nClient conformance (${seconds.toFixed(0)} s):\n\n${renderTable(results, { ...meta, cellTimes: true })}\n`);
if (writeTable) {
  // Without per-cell times, so a refresh only changes the document where results changed.
  writeConformanceTable(join(ROOT, TABLE_DOC), renderTable(results, meta));
  console.log(`${TABLE_DOC}: conformance section rewritten.`);
}
rmSync(resultsDir, { recursive: true, force: true });
const unexpected = dns.names().filter((name) => EXPECTED_LOOKUPS[name] === undefined);
if (unexpected.length > 0) console.error(`test:clients: unexpected DNS lookups (a client is trying to call out): ${unexpected.join(', ')}`);
// The same closing line as npm test's summary reporter, last, for CI to read.
const counts = jest as { numPassedTests?: number; numFailedTests?: number; numRuntimeErrorTestSuites?: number; numPendingTests?: number; numTodoTests?: number } | undefined;
const failed = (counts?.numFailedTests ?? 0) + (counts?.numRuntimeErrorTestSuites ?? 0);
console.log(`jest: ${counts?.numPassedTests ?? 0} passed, ${failed} failed, ${(counts?.numPendingTests ?? 0) + (counts?.numTodoTests ?? 0)} skipped`);
process.exit(status !== 0 ? status : unexpected.length > 0 ? 1 : 0);
