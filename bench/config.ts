import { parseArgs } from 'node:util';
import { FULL_SHAPE, SMOKE_SHAPE, type SeedShape } from './console-seed.ts';

/**
 * How long and how hard each phase runs. The full run takes about 6.5 minutes on 2 cores (2 of
 * them the Lambda memory sizes); the smoke run (`--smoke`) goes through every phase with tiny
 * counts in about 25 seconds, so CI notices when a measurement path breaks (its figures mean
 * nothing).
 */
export interface BenchConfig {
  smoke: boolean;
  /** Independent repetitions, each with a fresh gateway process; figures are their medians. */
  reps: number;
  /** Also write CPU profiles of the gateway under load, with a self-time summary. */
  profile: boolean;
  /** Profile a warm request inside the real runtime (bench/lambda/profile.ts). */
  lambdaProfile: boolean;
  outDir: string;
  throughput: { concurrency: number; warmupMs: number; measureMs: number };
  latency: { warmupMs: number; measureMs: number };
  ttfb: { warmup: number; count: number; deltas: number };
  /** Marginal CPU per event: streams of `small` vs `large` instant deltas at c=`concurrency`. */
  burst: { concurrency: number; small: number; large: number; warmupMs: number; measureMs: number };
  /** Steady-state CPU per event: `streams` paced streams, one event per `gapMs` each. */
  paced: { streams: number; gapMs: number; settleMs: number; windowMs: number };
  memory: { streams: number; burst: number; gapMs: number; settleMs: number; holdMs: number; sampleEveryMs: number; openTimeoutMs: number };
  coldImports: number;
  profileMs: number;
  /** --console-only: nothing but the console's phase (no bundle, no repetitions). */
  consoleOnly: boolean;
  /** The console's API against npm start with a year of seeded rollups (bench/console.ts); false with --no-console. */
  console: { enabled: boolean; shape: SeedShape; warmup: number; samples: number };
  /** Lambda memory sizes under a CPU quota (bench/lambda/): which parts run, and how much of each. */
  lambda: {
    /** False with --no-lambda. */
    enabled: boolean;
    sizes: number[];
    importSamples: number;
    coldSamples: number;
    /** Warm requests before the measured ones: a warm instance has served many, and its JIT has seen them. */
    warmupRequests: number;
    warmRequests: number;
    /** Marginal CPU per event: `count` streams of `small` and of `large` instant deltas. */
    streams: { count: number; small: number; large: number };
  };
}

type Base = Omit<BenchConfig, 'smoke' | 'profile' | 'lambdaProfile' | 'outDir' | 'lambda' | 'console' | 'consoleOnly'> & { lambda: Omit<BenchConfig['lambda'], 'enabled'>; console: Omit<BenchConfig['console'], 'enabled'> };

/** Lambda's memory sizes the report covers: the smallest, its doublings, the default, one vCPU. */
export const LAMBDA_SIZES_MB = [128, 256, 512, 1024, 1769];

const FULL: Base = {
  reps: 3,
  throughput: { concurrency: 32, warmupMs: 700, measureMs: 2_500 },
  latency: { warmupMs: 300, measureMs: 1_500 },
  ttfb: { warmup: 50, count: 400, deltas: 16 },
  burst: { concurrency: 32, small: 16, large: 1_024, warmupMs: 300, measureMs: 1_200 },
  paced: { streams: 50, gapMs: 10, settleMs: 300, windowMs: 2_500 },
  memory: { streams: 1_000, burst: 100, gapMs: 500, settleMs: 500, holdMs: 2_000, sampleEveryMs: 250, openTimeoutMs: 20_000 },
  coldImports: 11,
  profileMs: 4_000,
  console: { shape: FULL_SHAPE, warmup: 3, samples: 40 },
  lambda: { sizes: LAMBDA_SIZES_MB, importSamples: 7, coldSamples: 9, warmupRequests: 300, warmRequests: 200, streams: { count: 10, small: 16, large: 1_024 } },
};

const SMOKE: Base = {
  reps: 1,
  throughput: { concurrency: 4, warmupMs: 100, measureMs: 300 },
  latency: { warmupMs: 50, measureMs: 200 },
  ttfb: { warmup: 3, count: 10, deltas: 4 },
  burst: { concurrency: 4, small: 4, large: 32, warmupMs: 50, measureMs: 250 },
  paced: { streams: 10, gapMs: 20, settleMs: 100, windowMs: 300 },
  memory: { streams: 20, burst: 10, gapMs: 100, settleMs: 100, holdMs: 300, sampleEveryMs: 100, openTimeoutMs: 5_000 },
  coldImports: 2,
  profileMs: 300,
  console: { shape: SMOKE_SHAPE, warmup: 1, samples: 2 },
  // The smallest and the largest size: both ends of the quota path, in seconds.
  lambda: { sizes: [1769, 128], importSamples: 1, coldSamples: 1, warmupRequests: 2, warmRequests: 5, streams: { count: 2, small: 4, large: 32 } },
};

const USAGE = `npm run bench [-- options]
  --smoke        every measurement path once with tiny counts (seconds); exits 1 if one breaks
  --reps N       repetitions (default 3; figures are medians, spread is min-max)
  --profile      also CPU-profile the gateway under load and summarize self time
                 (--profile --reps 0: profiles only)
  --out DIR      where results go (default bench-results)
  --lambda-only  only the Lambda memory sizes: cold start, warm cost and price per size
                 under a CPU quota, the bundle started as deployed (about 2 min)
                 (--lambda-only --profile: only where a warm request's CPU goes inside the
                 runtime, at a full CPU, with CPU per request; about 30 s)
  --no-lambda    everything but the Lambda memory sizes
  --console-only only the console's API against npm start with a year of seeded usage
                 (1M requests a month): p50 and p95 of each call (about 2 min)
  --no-console   everything but the console's API`;

export function parseConfig(argv: string[]): BenchConfig {
  const { values } = parseArgs({
    args: argv,
    options: {
      smoke: { type: 'boolean', default: false },
      reps: { type: 'string' },
      profile: { type: 'boolean', default: false },
      out: { type: 'string', default: 'bench-results' },
      help: { type: 'boolean', default: false },
      'lambda-only': { type: 'boolean', default: false },
      'no-lambda': { type: 'boolean', default: false },
      'console-only': { type: 'boolean', default: false },
      'no-console': { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const base = values.smoke ? SMOKE : FULL;
  if (values['lambda-only'] && values['no-lambda']) throw new Error('--lambda-only and --no-lambda exclude each other');
  if (values['console-only'] && (values['no-console'] || values['lambda-only'])) throw new Error('--console-only goes with neither --no-console nor --lambda-only');
  const consoleOnly = values['console-only'];
  const lambdaOnly = values['lambda-only'];
  const reps = lambdaOnly || consoleOnly ? 0 : values.reps === undefined ? base.reps : Number(values.reps);
  // --reps 0 --profile: profiles only, for a quick look at what dominates.
  const least = values.profile || lambdaOnly || consoleOnly ? 0 : 1;
  if (!Number.isInteger(reps) || reps < least || reps > 20) throw new Error(`--reps must be an integer from ${least} to 20, got "${values.reps}"`);
  // The smoke run profiles too: the profile path must not rot either.
  // --lambda-only --profile: the runtime profile instead of the sizes.
  const lambdaProfile = !values['no-lambda'] && !consoleOnly && (values.smoke || (lambdaOnly && values.profile));
  const lambda = { ...base.lambda, enabled: !values['no-lambda'] && !consoleOnly && !(lambdaOnly && values.profile) };
  const consoleRun = { ...base.console, enabled: !values['no-console'] && !lambdaOnly };
  return { ...base, reps, lambda, console: consoleRun, consoleOnly, smoke: values.smoke, profile: !lambdaOnly && !consoleOnly && (values.profile || values.smoke), lambdaProfile, outDir: values.out };
}
