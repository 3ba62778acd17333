import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ChildMessage, ParentMessage, ProcessSample } from './child-ipc.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** A parent message before it gets its id (distributes over the union, unlike Omit). */
type Unsent<T> = T extends unknown ? Omit<T, 'id'> : never;

/** A benchmark child process (stub or gateway) reachable over IPC. */
export interface BenchChild {
  url: URL;
  key: string;
  pid: number;
  /** CPU time and memory of the child, taken by the child itself (after a full GC with `gc`). */
  sample(gc?: boolean): Promise<ProcessSample>;
  profileStart(): Promise<void>;
  profileStop(path: string): Promise<void>;
  /** The gateway only: flushes its usage and counts the requests metered in the usage table. */
  usage(): Promise<number>;
  stop(): Promise<void>;
}

/** Everything a child printed, kept short, for the error message when it fails. */
const OUTPUT_LIMIT = 8_000;

/**
 * The Node flags `npm start` runs the gateway with (package.json's `start` script), so the
 * benchmark's gateway process is tuned as shipped (the young generation's size: docs/performance.md).
 */
export function npmStartNodeFlags(): string[] {
  const start = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: { start: string } }).scripts.start;
  return nodeFlagsOf(start.split(' '));
}

/** The Node flags of a command line's words (`node --flag … bin/dev-server.ts`). */
export function nodeFlagsOf(command: readonly string[]): string[] {
  return command.filter((word) => word.startsWith('--'));
}

/**
 * Starts `bench/<script>` with the same Node, waits for its `ready` message, and fails fast
 * (with the child's output) if it exits or takes longer than `timeoutMs` to start.
 */
export async function startChild(script: string, env: Record<string, string>, timeoutMs = 30_000, nodeFlags: string[] = []): Promise<BenchChild> {
  // --expose-gc only lets the memory phase ask for a collection before it samples.
  const child = spawn(process.execPath, ['--expose-gc', ...nodeFlags, `bench/${script}`], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-OUTPUT_LIMIT));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = false;
  const pending = new Map<number, { resolve: (message: ChildMessage) => void; reject: (error: Error) => void }>();
  child.on('exit', (code, signal) => {
    exited = true;
    for (const waiter of pending.values()) waiter.reject(new Error(`${script} exited (${code ?? signal}):\n${output}`));
    pending.clear();
  });
  child.on('message', (message: ChildMessage) => {
    if (message.type === 'ready') return;
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    waiter?.resolve(message);
  });

  const ready = await waitForReady(child, script, timeoutMs, () => output);
  let nextId = 1;
  const ask = (message: Unsent<ParentMessage>) =>
    new Promise<ChildMessage>((resolve, reject) => {
      if (exited) return reject(new Error(`${script} is not running:\n${output}`));
      const id = nextId++;
      pending.set(id, { resolve, reject });
      child.send({ ...message, id });
    });
  const done = async (message: Unsent<ParentMessage>) => {
    const answer = await ask(message);
    if (answer.type === 'done' && answer.error) throw new Error(`${script}: ${answer.error}`);
  };
  return {
    url: new URL(ready.url),
    key: ready.key ?? '',
    pid: child.pid as number,
    async sample(gc = false) {
      const answer = await ask({ type: 'sample', gc });
      if (answer.type !== 'sample') throw new Error(`${script} answered ${answer.type} to a sample request`);
      return answer.sample;
    },
    profileStart: () => done({ type: 'profile-start' }),
    profileStop: (path) => done({ type: 'profile-stop', path }),
    async usage() {
      const answer = await ask({ type: 'usage' });
      if (answer.type !== 'usage') throw new Error(`${script} answered ${answer.type === 'done' ? answer.error : answer.type} to a usage request`);
      return answer.requests;
    },
    stop: () => stopChild(child, () => exited),
  };
}

function waitForReady(child: ChildProcess, script: string, timeoutMs: number, output: () => string): Promise<{ url: string; key?: string }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} did not start within ${timeoutMs} ms:\n${output()}`));
    }, timeoutMs);
    child.on('message', (message: ChildMessage) => {
      if (message.type !== 'ready') return;
      clearTimeout(timer);
      resolve(message);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code} before it was ready:\n${output()}`));
    });
  });
}

/** Closes the IPC channel (the child exits on disconnect); SIGKILL if it lingers. */
async function stopChild(child: ChildProcess, exited: () => boolean): Promise<void> {
  if (exited()) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (child.connected) child.disconnect();
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
  await gone;
  clearTimeout(timer);
}
