import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { childEnv } from '../support/processes.ts';
import { exchange, type Exchange } from './exchange.ts';
import { startFunctionUrlFront } from './function-url-front.ts';
import { startLambdaEnvironment, type LambdaEnvironment } from './lambda-environment.ts';
import { requireRic } from './real-runtime.ts';

/**
 * The probe handler (fixtures/handlers.mjs, one behaviour per path) under the real runtime
 * interface client and under the local stand-in, each in processes of their own, so that what a
 * failure does to the process is visible.
 */
const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ProbeRuntime {
  get(path: string): Promise<Exchange>;
  close(): Promise<void>;
}

export interface RealProbe extends ProbeRuntime {
  lambda: LambdaEnvironment;
}

/** `handler` names an export of fixtures/handlers.mjs, as a function's Handler setting does. */
export async function startRealProbe(handler = 'handlers.handler', options: { memoryMb?: number; environment?: Record<string, string>; dropConnectionAfterAnswer?: boolean } = {}): Promise<RealProbe> {
  const lambda = await startLambdaEnvironment({
    ricEntry: requireRic(),
    taskRoot: FIXTURES,
    handler,
    timeoutMs: 10_000,
    environment: options.environment ?? {},
    ...(options.memoryMb === undefined ? {} : { memoryMb: options.memoryMb }),
    ...(options.dropConnectionAfterAnswer ? { dropConnectionAfterAnswer: true } : {}),
  });
  const front = await startFunctionUrlFront((event) => lambda.invoke(event));
  return {
    lambda,
    get: (path) => exchange(front.url, { method: 'GET', path }),
    async close() {
      await front.close();
      await lambda.close();
    },
  };
}

export interface StandInProbe extends ProbeRuntime {
  process: ChildProcess;
  output(): string;
  /** Set once the process has exited. */
  exit(): { code: number | null; signal: string | null } | undefined;
}

/** `exportName` names an export of fixtures/handlers.mjs. */
export async function startStandInProbe(exportName = 'handler'): Promise<StandInProbe> {
  const child = spawn(process.execPath, ['test/runtime/stand-in-server.ts', exportName], { cwd: ROOT, env: childEnv() });
  let output = '';
  let exit: { code: number | null; signal: string | null } | undefined;
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  child.once('exit', (code, signal) => (exit = { code, signal }));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`stand-in did not start:\n${output}`)), 15_000);
    child.stdout.on('data', () => {
      const match = /listening on (\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    });
    child.once('exit', () => reject(new Error(`stand-in exited:\n${output}`)));
  });
  return {
    process: child,
    output: () => output,
    exit: () => exit,
    get: (path) => exchange(url, { method: 'GET', path }),
    async close() {
      if (exit !== undefined) return;
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    },
  };
}
