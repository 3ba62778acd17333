import { parseArgs } from 'node:util';

/**
 * How long and how hard each phase runs. The full run takes about 4 minutes on 2 cores; the
 * smoke run (`--smoke`) goes through every phase with tiny counts in a few seconds, so CI
 * notices when a measurement path breaks (its figures mean nothing).
 */
export interface BenchConfig {
  smoke: boolean;
  /** Independent repetitions, each with a fresh gateway process; figures are their medians. */
  reps: number;
  /** Also write CPU profiles of the gateway under load, with a self-time summary. */
  profile: boolean;
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
}

const FULL: Omit<BenchConfig, 'smoke' | 'profile' | 'outDir'> = {
  reps: 3,
  throughput: { concurrency: 32, warmupMs: 700, measureMs: 2_500 },
  latency: { warmupMs: 300, measureMs: 1_500 },
  ttfb: { warmup: 50, count: 400, deltas: 16 },
  burst: { concurrency: 32, small: 16, large: 1_024, warmupMs: 300, measureMs: 1_200 },
  paced: { streams: 50, gapMs: 10, settleMs: 300, windowMs: 2_500 },
  memory: { streams: 1_000, burst: 100, gapMs: 500, settleMs: 500, holdMs: 2_000, sampleEveryMs: 250, openTimeoutMs: 20_000 },
  coldImports: 11,
  profileMs: 4_000,
};

const SMOKE: Omit<BenchConfig, 'smoke' | 'profile' | 'outDir'> = {
  reps: 1,
  throughput: { concurrency: 4, warmupMs: 100, measureMs: 300 },
  latency: { warmupMs: 50, measureMs: 200 },
  ttfb: { warmup: 3, count: 10, deltas: 4 },
  burst: { concurrency: 4, small: 4, large: 32, warmupMs: 50, measureMs: 250 },
  paced: { streams: 10, gapMs: 20, settleMs: 100, windowMs: 300 },
  memory: { streams: 20, burst: 10, gapMs: 100, settleMs: 100, holdMs: 300, sampleEveryMs: 100, openTimeoutMs: 5_000 },
  coldImports: 2,
  profileMs: 300,
};

const USAGE = `npm run bench [-- options]
  --smoke        every measurement path once with tiny counts (seconds); exits 1 if one breaks
  --reps N       repetitions (default 3; figures are medians, spread is min-max)
  --profile      also CPU-profile the gateway under load and summarize self time
                 (--profile --reps 0: profiles only)
  --out DIR      where results go (default bench-results)`;

export function parseConfig(argv: string[]): BenchConfig {
  const { values } = parseArgs({
    args: argv,
    options: {
      smoke: { type: 'boolean', default: false },
      reps: { type: 'string' },
      profile: { type: 'boolean', default: false },
      out: { type: 'string', default: 'bench-results' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const base = values.smoke ? SMOKE : FULL;
  const reps = values.reps === undefined ? base.reps : Number(values.reps);
  // --reps 0 --profile: profiles only, for a quick look at what dominates.
  const least = values.profile ? 0 : 1;
  if (!Number.isInteger(reps) || reps < least || reps > 20) throw new Error(`--reps must be an integer from ${least} to 20, got "${values.reps}"`);
  // The smoke run profiles too: the profile path must not rot either.
  return { ...base, reps, smoke: values.smoke, profile: values.profile || values.smoke, outDir: values.out };
}
