import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, release, totalmem } from 'node:os';
import { join } from 'node:path';
import type { BenchConfig } from './config.ts';
import { summarize, type Summary } from './stats.ts';
import { CONTEXT_ROWS, formatTarget, formatValue, ROWS, verdict, type Row } from './targets.ts';
import { PATHS } from './workloads.ts';
import type { ProfileSummary } from './profile-summary.ts';
import type { LambdaProfile } from './lambda/profile.ts';
import type { LambdaResults } from './lambda/sizes.ts';

/** Above this share of a core used by other processes in a window, the run is flagged as noisy. */
const NOISY_SHARE = 0.15;

/** Turns per-repetition figures into medians with spread, a printed table and a JSON file. */
export interface RunResults {
  config: BenchConfig;
  startedAt: string;
  durationS: number;
  /** One flat figure map per repetition. */
  reps: Record<string, number>[];
  /** Figures measured once per run, as lists of samples (bundle size, cold imports). */
  once: Record<string, number[]>;
  profiles: ProfileSummary[];
  /** Cold start and cost per Lambda memory size (bench/lambda/), unless --no-lambda. */
  lambda?: LambdaResults;
  /** Where a warm request's CPU goes inside the runtime (--lambda-only --profile, and the smoke run). */
  lambdaProfile?: LambdaProfile;
  errors: string[];
}

export interface ReportRow {
  label: string;
  target: string;
  median: string;
  spread: string;
  result: string;
}

export function machine(): Record<string, string | number> {
  let model = cpus()[0]?.model ?? 'unknown';
  try {
    model = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? model;
  } catch {
    // Not Linux: os.cpus() is the best there is.
  }
  return { cpus: availableParallelism(), cpuModel: model, memoryGiB: Math.round(totalmem() / 2 ** 30), kernel: release(), node: process.version, platform: process.platform };
}

export function summaries(results: RunResults): Record<string, Summary> {
  const series: Record<string, number[]> = {};
  for (const figures of results.reps) for (const [key, value] of Object.entries(figures)) (series[key] ??= []).push(value);
  for (const [key, values] of Object.entries(results.once)) series[key] = values;
  return Object.fromEntries(Object.entries(series).map(([key, values]) => [key, summarize(values)]));
}

/** A row is unavailable while the gateway answers its path with anything but 200. */
function unavailable(row: Row, all: Record<string, Summary>): string | undefined {
  if (row.pathId === undefined || PATHS.find((path) => path.id === row.pathId)?.kind === 'passthrough') return undefined;
  const status = all[`status.${row.pathId}`]?.median;
  return status === 200 ? undefined : `not served yet (HTTP ${status ?? '?'})`;
}

export function reportRows(rows: Row[], all: Record<string, Summary>): ReportRow[] {
  return rows.map((row) => {
    const summary = all[row.key];
    const missing = unavailable(row, all);
    const spread = summary && summary.runs.length > 1 ? `${formatValue(summary.min, row.unit)} .. ${formatValue(summary.max, row.unit)}` : '';
    return {
      label: row.label,
      target: formatTarget(row.target, row.unit),
      median: missing ?? (summary ? formatValue(summary.median, row.unit) : 'n/a'),
      spread: missing ? '' : spread,
      result: missing ? 'n/a' : row.target && summary ? verdict(summary.median, row.target) : '',
    };
  });
}

export function formatTable(rows: ReportRow[], withResult: boolean): string {
  const header: ReportRow = { label: 'Metric', target: 'Target', median: 'Median', spread: 'Spread (min .. max)', result: 'Result' };
  const columns: (keyof ReportRow)[] = withResult ? ['label', 'target', 'median', 'spread', 'result'] : ['label', 'median', 'spread'];
  const widths = columns.map((column) => Math.max(...[header, ...rows].map((row) => row[column].length)));
  const line = (row: ReportRow) => `| ${columns.map((column, i) => row[column].padEnd(widths[i] as number)).join(' | ')} |`;
  const rule = `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** Prints the tables and writes the JSON; returns the path written. */
export function writeReport(results: RunResults): string {
  const all = summaries(results);
  const targeted = reportRows(ROWS, all);
  const context = reportRows(CONTEXT_ROWS, all);
  const reps = results.reps.length;
  if (reps === 0) return writeJson(results, all, [], []);
  console.log(`\nResults: medians of ${reps} repetition(s)${results.config.smoke ? ' (SMOKE RUN: tiny counts, figures are meaningless)' : ''}\n`);
  const others = all['share.others.max']?.max ?? 0;
  if (others > NOISY_SHARE) {
    console.log(`WARNING: other processes used up to ${(others * 100).toFixed(0)}% of a core during a measured window; figures are unreliable. Re-run on a quiet machine.\n`);
  }
  console.log(formatTable(targeted, true));
  console.log('\nContext\n');
  console.log(formatTable(context, false));
  return writeJson(results, all, targeted, context);
}

function writeJson(results: RunResults, all: Record<string, Summary>, targeted: ReportRow[], context: ReportRow[]): string {
  mkdirSync(results.config.outDir, { recursive: true });
  // Only a full measured run becomes latest.json; smoke and profile-only runs keep their own file.
  const full = !results.config.smoke && results.reps.length > 0;
  const name = full ? `bench-${results.startedAt.replace(/[:.]/g, '-')}.json` : results.config.smoke ? 'smoke.json' : results.config.consoleOnly ? 'console.json' : 'profile.json';
  const file = join(results.config.outDir, name);
  const json = JSON.stringify({ ...results, machine: machine(), summary: all, table: targeted, context }, null, 2);
  writeFileSync(file, json);
  if (full) writeFileSync(join(results.config.outDir, 'latest.json'), json);
  return file;
}
