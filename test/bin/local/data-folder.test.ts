import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claimDataFolder, dataFolderHolder, LOCK_FILE, type Holder } from '../../../bin/local/data-folder.ts';

const folder = () => mkdtempSync(join(tmpdir(), 'data-folder-'));
const record = (dir: string, holder: Partial<Holder>) => writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ startedAt: new Date().toISOString(), ...holder }));

/** A live process with these arguments on its command line (a sleeping node). */
function sleeper(...args: string[]): { pid: number; stop(): void } {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)', ...args], { stdio: 'ignore' });
  return { pid: child.pid as number, stop: () => child.kill() };
}

test('a claim writes a 0600 record that update() completes and release() removes', () => {
  const dir = folder();
  const claimed = claimDataFolder(dir, 'server');
  if (!('claim' in claimed)) throw new Error('not claimed');
  expect(statSync(join(dir, LOCK_FILE)).mode & 0o777).toBe(0o600);
  claimed.claim.update({ url: 'http://127.0.0.1:1234', store: 'http://127.0.0.1:5678/secret', keyCacheSeconds: 30 });
  expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid, role: 'server', url: 'http://127.0.0.1:1234', keyCacheSeconds: 30 });
  expect(statSync(join(dir, LOCK_FILE)).mode & 0o777).toBe(0o600);
  claimed.claim.release();
  expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
});

test('a folder held by a live gateway process is not claimed: the holder is named', () => {
  const dir = folder();
  // Its command line is the gateway's: `... bin/dev-server.ts`.
  const gateway = sleeper('bin/dev-server.ts');
  try {
    record(dir, { pid: gateway.pid, role: 'server', url: 'http://127.0.0.1:8787' });
    const claimed = claimDataFolder(dir, 'server');
    expect(claimed).toEqual({ heldBy: expect.objectContaining({ pid: gateway.pid, role: 'server', url: 'http://127.0.0.1:8787' }) });
    expect(dataFolderHolder(dir)?.pid).toBe(gateway.pid);
  } finally {
    gateway.stop();
  }
});

test.each([
  ['a process that has ended (kill -9, a crash)', () => 2 ** 22 + 12345],
  ['this very process (a container restart reuses the pid)', () => process.pid],
  ['a live process that is not the gateway (a reused pid)', (other: number) => other],
] as const)('a record left by %s is taken over', (_case, pid) => {
  const dir = folder();
  const other = sleeper('something-else.js');
  try {
    record(dir, { pid: pid(other.pid), role: 'server' });
    expect(dataFolderHolder(dir)).toBeUndefined();
    const claimed = claimDataFolder(dir, 'keys');
    expect('claim' in claimed).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid, role: 'keys' });
  } finally {
    other.stop();
  }
});
