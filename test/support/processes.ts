import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;

/** Environment for child processes: no provider keys, no AWS endpoints beyond loopback. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  // Nothing inherited from the developer's shell; what the test passes explicitly wins.
  const env = { ...process.env };
  delete env.ANTHROPIC_API_KEY;
  delete env.OPENAI_API_KEY;
  delete env.GATEWAY_CONFIG;
  return { ...env, ...extra };
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Epoch ms at which the exit was seen. */
  at: number;
}

export interface RunningServer {
  url: string;
  output: () => string;
  stop(): Promise<void>;
  process: ChildProcess;
}

/** What startDevServer returns: a RunningServer that also reports how the process ended. */
export interface DevServer extends RunningServer {
  /** Sends `signal` (SIGTERM by default) and resolves once the process has exited (at once if it already had). */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Resolves when the process exits, however it ends. */
  exited: Promise<ProcessExit>;
  /** Set once the process has exited. */
  exit(): ProcessExit | undefined;
}

/** Starts `npm start`'s entry (bin/dev-server.ts) and waits until it says where it listens. */
export async function startDevServer(env: Record<string, string>): Promise<DevServer> {
  const child = spawn(process.execPath, ['bin/dev-server.ts'], { cwd: ROOT, env: childEnv({ PORT: '0', ...env }) });
  let output = '';
  let exit: ProcessExit | undefined;
  const exited = new Promise<ProcessExit>((resolve) => child.once('exit', (code, signal) => resolve((exit = { code, signal, at: Date.now() }))));
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`dev server did not start:\n${output}`)), 15_000);
    const check = () => {
      const match = /Gateway listening on (http:\/\/\S+)/.exec(output);
      if (match && output.includes('\nReady.')) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => reject(new Error(`dev server exited with ${code}:\n${output}`)));
  });
  return {
    url,
    output: () => output,
    process: child,
    exited,
    exit: () => exit,
    async stop(signal = 'SIGTERM') {
      if (exit === undefined) child.kill(signal);
      await exited;
    },
  };
}

/**
 * The first key a start created. `npm start`'s output is not a terminal here, so the key is not
 * in it: the output names the data folder's file that holds it (bin/local/first-key.ts).
 */
export function firstKey(output: string): string {
  const path = /it is in (\S+) \(readable only by this user\)/.exec(output)?.[1];
  if (path === undefined) throw new Error(`npm start named no first-key file:\n${output}`);
  const key = /^ {2}(gwk_\S+)$/m.exec(readFileSync(path, 'utf8'))?.[1];
  if (key === undefined) throw new Error(`${path} holds no key`);
  return key;
}

/** Runs the key CLI (`npm run keys -- ...`'s entry) and returns its exit code and output. */
export function runKeys(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/keys.ts', ...args], { cwd: ROOT, env: childEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Retries an assertion until it passes or `timeoutMs` runs out (for output of other processes). */
export async function eventually(assertion: () => void, timeoutMs = 3_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      return assertion();
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

/**
 * Polls `probe` until it gives a value, and returns it; fails after `timeoutMs` naming `what` (and
 * `detail()`, say a process's output), instead of leaving a test to jest's own timeout. `everyMs`
 * is the pause between probes: a millisecond for a socket's state, longer where the probe scans
 * logs while other processes (a CLI, a server) need the CPU.
 */
export async function until<T>(
  probe: () => T | undefined | false,
  what: string,
  options: { timeoutMs?: number; everyMs?: number; detail?: () => string } = {},
): Promise<T> {
  const { timeoutMs = 5_000, everyMs = 1, detail } = options;
  for (const end = Date.now() + timeoutMs; ; ) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`gave up after ${timeoutMs} ms waiting for ${what}${detail ? `; ${detail()}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
