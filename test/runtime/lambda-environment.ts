import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { startRuntimeApi, type Invocation, type RuntimeApi } from './runtime-api.ts';

/**
 * One Lambda execution environment, emulated: the real runtime interface client (`node
 * <aws-lambda-ric>/index.mjs`) in a child process, fed by a loopback Runtime API. Like Lambda, it
 * starts the process on the first invocation (cold start), ends an invocation that outlives the
 * function timeout by killing the process ("Task timed out"), fails the invocation in flight
 * when the process exits, and starts a new process for the next one.
 */
export interface LambdaEnvironmentOptions {
  /** The RIC entry (test/runtime/build-ric.ts). */
  ricEntry: string;
  /** The directory holding the function code (LAMBDA_TASK_ROOT). */
  taskRoot: string;
  /** `file.export`, as in the function's Handler setting. */
  handler: string;
  timeoutMs: number;
  /** The function's own environment (what the stack sets, plus endpoints and credentials). */
  environment: Record<string, string>;
  functionName?: string;
  memoryMb?: number;
  /**
   * Turns the runtime's command line into the one actually started, e.g. to run it inside a
   * CPU-limited cgroup (bench/lambda/cpu-quota.ts); the process must `exec` the command so its pid
   * stays the runtime's.
   */
  launch?: (command: string, args: string[]) => { command: string; args: string[] };
  /**
   * Called when a new runtime process first polls for an invocation: its Init phase is over
   * (bench/lambda/ lifts the CPU quota for Init, as Lambda does for on-demand environments).
   */
  onInitDone?: () => void;
  /** How the loopback Runtime API treats the runtime's connection. */
  dropConnectionAfterAnswer?: boolean;
}

export interface LambdaEnvironment {
  invoke(event: unknown): Invocation;
  /** Every line the runtime processes wrote to stdout, in order, across cold starts. */
  stdout: string[];
  stderr: string[];
  /** One entry per runtime process started, with how it ended (undefined while running). */
  starts: { pid: number | undefined; exit: { code: number | null; signal: string | null } | undefined }[];
  api: RuntimeApi;
  close(): Promise<void>;
}

const DEFAULT_MEMORY_MB = 1024;

/**
 * Node's flags as Lambda's Node.js runtime starts it (its `/var/runtime/bootstrap`, read in the
 * public base image of nodejs18.x, public.ecr.aws/lambda/nodejs): V8's young generation a tenth of
 * the function's memory (each semi-space half of that), the old generation the rest, `gc()`
 * exposed and an 80 KiB header limit. The young generation's size sets how often the collector
 * runs, so the benchmark's CPU per request is measured with the same.
 */
export function runtimeNodeFlags(memoryMb: number): string[] {
  const newSpaceMb = Math.floor(memoryMb / 10);
  return ['--expose-gc', '--max-http-header-size', '81920', `--max-semi-space-size=${Math.floor(newSpaceMb / 2)}`, `--max-old-space-size=${memoryMb - newSpaceMb}`];
}

/**
 * What the bootstrap executes: node, or the function's exec wrapper (AWS_LAMBDA_EXEC_WRAPPER) with
 * node's command line as its arguments, after the same checks (a missing wrapper exits 127, one
 * that is not executable 126, and Init fails). The function's own files are at /var/task on
 * Lambda: a path there is read in the task root.
 * https://docs.aws.amazon.com/lambda/latest/dg/runtimes-modify.html#runtime-wrapper
 */
function bootstrapCommand(wrapper: string | undefined, taskRoot: string, nodeArgs: string[]): { command: string; args: string[] } {
  if (!wrapper) return { command: process.execPath, args: nodeArgs };
  const path = wrapper.replace(/^\/var\/task(?=\/)/, taskRoot);
  const refusal = !existsSync(path) ? [`${wrapper}: does not exist`, 127] : !isExecutable(path) ? [`${wrapper}: is not an executable`, 126] : undefined;
  if (refusal) return { command: '/bin/sh', args: ['-c', 'echo "$0"; exit "$1"', String(refusal[0]), String(refusal[1])] };
  return { command: path, args: [process.execPath, ...nodeArgs] };
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export async function startLambdaEnvironment(options: LambdaEnvironmentOptions): Promise<LambdaEnvironment> {
  const functionName = options.functionName ?? 'gateway-ric';
  // Set when a runtime process starts, cleared by its first poll of /next.
  let initializing = false;
  const api = await startRuntimeApi({
    functionName,
    ...(options.dropConnectionAfterAnswer ? { dropConnectionAfterAnswer: true } : {}),
    onPoll: () => {
      if (!initializing) return;
      initializing = false;
      options.onInitDone?.();
    },
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const starts: LambdaEnvironment['starts'] = [];
  let child: ChildProcess | undefined;
  let closing = false;
  /** Processes ended by the platform itself (timeout): their invocation is already answered. */
  const killed = new WeakSet<ChildProcess>();

  // The variables Lambda defines for a Node.js function:
  // https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime
  const environment: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    _HANDLER: options.handler,
    LAMBDA_TASK_ROOT: options.taskRoot,
    AWS_LAMBDA_RUNTIME_API: api.address,
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
    AWS_LAMBDA_FUNCTION_NAME: functionName,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(options.memoryMb ?? DEFAULT_MEMORY_MB),
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${functionName}`,
    AWS_LAMBDA_LOG_STREAM_NAME: '2026/01/01/[$LATEST]00000000000000000000000000000000',
    // The stack sets LoggingFormat.JSON (lib/constructs/gateway-function.ts).
    AWS_LAMBDA_LOG_FORMAT: 'JSON',
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    ...options.environment,
  };

  const start = () => {
    const runtime = bootstrapCommand(environment.AWS_LAMBDA_EXEC_WRAPPER, options.taskRoot, [...runtimeNodeFlags(options.memoryMb ?? DEFAULT_MEMORY_MB), options.ricEntry]);
    const command = options.launch?.(runtime.command, runtime.args) ?? runtime;
    initializing = true;
    const started = spawn(command.command, command.args, { cwd: options.taskRoot, env: environment, stdio: ['ignore', 'pipe', 'pipe'] });
    const record: LambdaEnvironment['starts'][number] = { pid: started.pid, exit: undefined };
    const deliveredBefore = api.delivered();
    starts.push(record);
    collectLines(started.stdout, stdout);
    collectLines(started.stderr, stderr);
    // 'close', not 'exit': by then everything the process wrote has been read.
    started.once('close', (code, signal) => {
      record.exit = { code, signal };
      if (child === started) child = undefined;
      if (closing) return;
      if (killed.has(started)) {
        if (api.queued() > 0) start();
        return;
      }
      // Lambda fails the invocation in flight, or the one whose cold start died; the next one
      // gets a new environment.
      const message = `Runtime exited with error: ${signal ? `signal: ${signal}` : `exit status ${code}`}`;
      if (api.current() !== undefined) api.abort('Runtime.ExitError', message);
      else if (api.delivered() === deliveredBefore) api.failQueued('Runtime.ExitError', message);
      if (api.queued() > 0) start();
    });
    child = started;
  };

  return {
    api,
    stdout,
    stderr,
    starts,
    invoke(event) {
      if (child === undefined) start();
      const invocation = api.invoke(event, options.timeoutMs);
      // The timeout counts from when the runtime takes the invocation.
      const watch = setInterval(() => {
        if (invocation.deadline === undefined || Date.now() < invocation.deadline) return;
        clearInterval(watch);
        api.abort('Sandbox.Timedout', `RequestId: ${invocation.requestId} Error: Task timed out after ${(options.timeoutMs / 1000).toFixed(2)} seconds`);
        if (child) {
          killed.add(child);
          child.kill('SIGKILL');
        }
      }, 20);
      void invocation.done.then(() => clearInterval(watch));
      return invocation;
    },
    async close() {
      closing = true;
      const running = child;
      if (running && running.exitCode === null && running.signalCode === null) {
        await new Promise<void>((resolve) => {
          running.once('exit', () => resolve());
          running.kill('SIGKILL');
        });
      }
      await api.close();
    },
  };
}

function collectLines(stream: NodeJS.ReadableStream | null, into: string[]): void {
  let rest = '';
  stream?.setEncoding('utf8');
  stream?.on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    into.push(...lines);
  });
  stream?.on('end', () => {
    if (rest) into.push(rest);
  });
}
