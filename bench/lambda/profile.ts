import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuiltBundle } from '../bundle.ts';
import type { BenchConfig } from '../config.ts';
import { RawConnection, serializeRequest, type ResponseRecord } from '../http-client.ts';
import { layerOf, summarizeProfile, type Activity, type ProfileSummary } from '../profile-summary.ts';
import { median } from '../stats.ts';
import { PATHS, requestBody, requestHeaders, requestPath, type BenchPath } from '../workloads.ts';
import { startDeployment } from './deployment.ts';

/**
 * Where a warm request's CPU goes inside the real runtime (`npm run bench -- --lambda-only
 * --profile`): one execution environment at a full CPU, as deployed (runtime client, HTTPS to
 * DynamoDB, Secrets Manager and the upstream, the usage write and event, the log line on stdout).
 * First CPU per request in unprofiled windows (all threads of the runtime process, and its main
 * thread alone): right after the warm-up, and again at the steady state, a few thousand requests
 * on (V8 keeps optimizing and the young generation keeps growing well past the first few hundred,
 * and a kept environment serves thousands). Then a V8 CPU profile of the main thread over more
 * requests (profiler-preload.mjs), charged per request to activities and layers.
 */
export interface LambdaProfile {
  /** CPU per warm request, all threads, one figure per window right after the warm-up, µs. */
  cpuPerRequestUs: number[];
  /** Of which the main (JS) thread, µs. */
  mainThreadUs: number[];
  /** The same at the steady state, once `steadyAfter` requests were served. */
  steady: { after: number; cpuPerRequestUs: number[]; mainThreadUs: number[] };
  requestsProfiled: number;
  summary: ProfileSummary;
}

const PRELOAD = fileURLToPath(new URL('./profiler-preload.mjs', import.meta.url));
const MESSAGES = PATHS.find((path) => path.id === 'messages') as BenchPath;

/** What a runtime-path frame belongs to, in precedence order (a stack's first match wins). */
const ACTIVITIES: Activity[] = [
  { name: 'SigV4 signing (lambda/aws/signer.ts)', matches: (f) => f.module === 'lambda/aws/signer.ts' },
  { name: 'request log line (build + stdout write)', matches: (f) => f.module.startsWith('lambda/observability/') || f.label.startsWith('log ') },
  // On the warm path the only AWS calls are the usage write and event (the key and the secret are cached).
  { name: 'usage write and usage event (usage/, DynamoDB calls)', matches: (f) => f.module.startsWith('lambda/usage/') || f.module.startsWith('lambda/aws/') },
  { name: 'upstream call and relay (upstream/, handlers/)', matches: (f) => f.module.startsWith('lambda/upstream/') || f.module.startsWith('lambda/handlers/') },
  { name: 'checks: context, key, body, limits (middleware/, auth/)', matches: (f) => f.module.startsWith('lambda/middleware/') || f.module.startsWith('lambda/auth/') },
  { name: 'middy pipeline and the rest of lambda/', matches: (f) => f.module.startsWith('lambda/') || f.module.startsWith('bundled node_modules/@middy') },
  // The gateway's own (runtime-client.mjs, beside the bundle, which the wrapper runs) or AWS's (GATEWAY_RUNTIME_CLIENT=aws).
  { name: 'runtime client: next invocation, response stream', matches: (f) => isRuntimeClient(f.module) },
  { name: 'TLS (decrypt, encrypt, handshake)', matches: (f) => /tls|_tls_wrap/.test(f.module) },
  { name: 'garbage collection', matches: (f) => f.module === '(gc)' },
];

const isRuntimeClient = (module: string) => module.includes('aws-lambda-ric') || module.endsWith('/runtime-client.mjs');

function lambdaLayerOf(module: string): string {
  if (module.includes('aws-lambda-ric')) return 'Lambda runtime interface client (its JS)';
  if (module.endsWith('/runtime-client.mjs')) return "the gateway's runtime client (runtime-client.mjs)";
  if (/^node:(internal\/)?(tls|_tls)|_tls_wrap|internal\/tls/.test(module)) return 'Node.js TLS';
  if (/^node:(internal\/)?(http|_http)|internal\/http/.test(module)) return 'Node.js http client';
  if (/^node:(internal\/)?(net|stream|streams|webstreams)|internal\/(streams|webstreams)/.test(module)) return 'Node.js net and streams';
  return layerOf(module);
}

/** Requests per phase: the benchmark's (full or smoke), or fewer for a quick look. */
export interface ProfileCounts {
  warmup: number;
  windows: number;
  perWindow: number;
  /** Requests served (warm-up and early windows included) before the steady windows. */
  steadyAfter: number;
  profiled: number;
}

export async function profileLambda(config: BenchConfig, bundle: BuiltBundle, outDir: string, log: (text: string) => void, counts?: ProfileCounts): Promise<LambdaProfile> {
  const { warmup: warmupRequests, windows, perWindow, steadyAfter, profiled } =
    counts ?? (config.smoke ? { warmup: config.lambda.warmupRequests, windows: 2, perWindow: 5, steadyAfter: 30, profiled: 10 } : { warmup: config.lambda.warmupRequests, windows: 5, perWindow: 300, steadyAfter: 5_000, profiled: 1_500 });
  const file = resolve(join(outDir, 'profile-lambda-warm.cpuprofile'));
  for (const stale of [file, `${file}.started`, `${file}.done`]) rmSync(stale, { force: true });
  const deployment = await startDeployment(bundle.dir);
  try {
    const fn = await deployment.startFunction({ memoryMb: 1769, launch: undefined, environment: { NODE_OPTIONS: `--import=${PRELOAD}`, BENCH_PROFILE_FILE: file } });
    try {
      const connection = await RawConnection.open(fn.url);
      const bytes = serializeRequest(fn.url, requestPath(MESSAGES, 'gateway'), requestHeaders(MESSAGES, deployment.key), requestBody(MESSAGES, { deltas: 0, gapMs: 0 }, false));
      let logged = 0;
      const run = async (count: number) => {
        for (let i = 0; i < count; i++) checked(await connection.send(bytes));
        logged += count;
        await fn.logged(logged);
      };
      log(`Lambda profile: ${warmupRequests + 1} warm-up requests at a full CPU`);
      await run(warmupRequests + 1);
      const pid = fn.lambda.starts.at(-1)?.pid as number;
      const measure = async () => {
        const cpuPerRequestUs: number[] = [];
        const mainThreadUs: number[] = [];
        for (let window = 0; window < windows; window++) {
          const before = threadCpuUs(pid);
          await run(perWindow);
          const after = threadCpuUs(pid);
          cpuPerRequestUs.push((after.all - before.all) / perWindow);
          mainThreadUs.push((after.main - before.main) / perWindow);
        }
        return { cpuPerRequestUs, mainThreadUs };
      };
      const early = await measure();
      log(`Lambda profile: on to ${steadyAfter} requests served, then the steady state`);
      await run(Math.max(0, steadyAfter - logged));
      const steady = { after: logged, ...(await measure()) };
      log(`Lambda profile: ${profiled} requests under the V8 profiler`);
      await signalled(pid, `${file}.started`);
      await run(profiled);
      await signalled(pid, `${file}.done`);
      connection.destroy();
      const summary = summarizeProfile(`warm non-streaming Messages request inside the runtime, full CPU, ${profiled} requests`, file, bundle.path, bundle.mapPath, { top: 25, layerOf: lambdaLayerOf, activities: ACTIVITIES });
      return { ...early, steady, requestsProfiled: profiled, summary };
    } finally {
      await fn.close();
    }
  } finally {
    await deployment.close();
  }
}

function checked(record: ResponseRecord): void {
  if (record.status !== 200 || record.bodyBytes === 0) throw new Error(`the function answered ${record.status} with ${record.bodyBytes} bytes`);
}

/** Sends SIGUSR2 and waits for the preload to say it acted. */
async function signalled(pid: number, marker: string): Promise<void> {
  process.kill(pid, 'SIGUSR2');
  const until = Date.now() + 30_000;
  while (!existsSync(marker)) {
    if (Date.now() > until) throw new Error(`the runtime process did not answer the profiler signal (${marker})`);
    await new Promise((done) => setTimeout(done, 10));
  }
}

/** CPU time of the runtime process: all its threads, and its main thread (tid = pid), µs. */
function threadCpuUs(pid: number): { all: number; main: number } {
  let all = 0;
  let main = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    all += ns;
    if (Number(tid) === pid) main = ns;
  }
  return { all: all / 1000, main: main / 1000 };
}

export function formatLambdaProfile(result: LambdaProfile): string {
  const spread = (values: number[]) => `${Math.round(median(values))} us (${Math.round(Math.min(...values))}-${Math.round(Math.max(...values))})`;
  const { summary, requestsProfiled } = result;
  const lines = [
    `Lambda runtime path, warm, full CPU: CPU per request ${spread(result.cpuPerRequestUs)} all threads, ${spread(result.mainThreadUs)} main thread (median of ${result.cpuPerRequestUs.length} windows, min-max)`,
    `  at the steady state (after ${result.steady.after} requests): ${spread(result.steady.cpuPerRequestUs)} all threads, ${spread(result.steady.mainThreadUs)} main thread`,
    `Profile of the main thread, at the steady state: ${((summary.busyMs * 1000) / requestsProfiled).toFixed(0)} us busy per request (profiler overhead included)`,
  ];
  const section = (title: string, rows: { label: string; ms: number; share: number }[]) => {
    lines.push(`  ${title}`);
    for (const row of rows) lines.push(`    ${((row.ms * 1000) / requestsProfiled).toFixed(0).padStart(5)} us ${(row.share * 100).toFixed(1).padStart(5)}%  ${row.label}`);
  };
  if (summary.byActivity) section('by activity (whole stack; the first listed activity on it)', summary.byActivity);
  section('by layer (self time)', summary.byLayer);
  section('by module (self time)', summary.byModule);
  section('by function (self time, original source line)', summary.byFunction);
  return lines.join('\n');
}
