import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildBundle, measureColdImport, removeBundle, type BuiltBundle } from './bundle.ts';
import { parseConfig, type BenchConfig } from './config.ts';
import { consolePhase } from './console.ts';
import type { PhaseContext } from './phase-context.ts';
import { formatLambdaReport } from './lambda/report.ts';
import { formatLambdaProfile, profileLambda } from './lambda/profile.ts';
import { measureLambdaSizes } from './lambda/sizes.ts';
import { floorPhase, gatewayCpuPerRequest, latencyPhase, probePath, settlePhase, throughputPhase, ttfbPhase } from './phases-requests.ts';
import { burstEventsPhase, memoryPhase, pacedEventsPhase } from './phases-streams.ts';
import { npmStartNodeFlags, startChild, type BenchChild } from './processes.ts';
import { profilePhase } from './profile.ts';
import { formatProfile } from './profile-summary.ts';
import { writeReport, type RunResults } from './report.ts';
import { PASSTHROUGH, PATHS } from './workloads.ts';

/**
 * `npm run bench`: the gateway's own cost, measured side by side with a direct upstream.
 *
 * Three processes: this one (the load generator), the upstream stub, and the gateway (the
 * production bundle behind the Function URL emulation). CPU and memory are read from the
 * gateway process alone. Every repetition starts a fresh stub and gateway; the figures quoted
 * are medians over repetitions. Exits 1 only when a measurement path broke (a bad response, a
 * crashed process); missing a target never fails the run. See docs/performance.md.
 */
const config = parseConfig(process.argv.slice(2));
const startedAt = new Date();
const results: RunResults = { config, startedAt: startedAt.toISOString(), durationS: 0, reps: [], once: {}, profiles: [], errors: [] };
const log = (text: string) => console.log(`[${((Date.now() - startedAt.getTime()) / 1000).toFixed(1).padStart(5)}s] ${text}`);

/** Runs one phase; a phase that throws is a broken measurement path, recorded, not fatal. */
async function timed(ctx: PhaseContext, name: string, phase: () => Promise<void>): Promise<void> {
  const where = ctx.rep < config.reps ? `rep ${ctx.rep + 1}/${config.reps}` : 'profile';
  log(`${where}: ${name}`);
  try {
    await phase();
  } catch (error) {
    ctx.errors.push(`${where}, ${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function startGateway(bundle: BuiltBundle, stub: BenchChild): Promise<BenchChild> {
  return startChild('gateway-server.ts', { BENCH_BUNDLE: bundle.path, BENCH_STUB_URL: stub.url.origin }, undefined, npmStartNodeFlags());
}

/**
 * One repetition on a fresh stub and gateway: memory first, on processes that have seen only
 * warm-up (RSS, once grown, is not given back, so a used process would hide the cost).
 */
async function repetition(rep: number, bundle: BuiltBundle, cfg: BenchConfig): Promise<Record<string, number>> {
  const stub = await startChild('stub-server.ts', {});
  const gateway = await startGateway(bundle, stub).catch(async (error: unknown) => {
    await stub.stop();
    throw error;
  });
  const ctx: PhaseContext = { config: cfg, rep, stub, gateway, figures: {}, errors: results.errors };
  try {
    const [messages] = PASSTHROUGH;
    if (messages) await timed(ctx, `memory, ${cfg.memory.streams} paced streams`, () => memoryPhase(ctx, messages));
    await timed(ctx, 'settle: unmeasured load on every passthrough path', () => settlePhase(ctx, PASSTHROUGH));
    for (const path of PASSTHROUGH) await timed(ctx, `throughput c=${cfg.throughput.concurrency}, ${path.label}`, () => throughputPhase(ctx, path));
    if (messages) await timed(ctx, 'floors: emulation, middy, bare Node proxy', () => floorPhase(ctx, messages));
    for (const path of PASSTHROUGH) await timed(ctx, `latency c=1, ${path.label}`, () => latencyPhase(ctx, path));
    for (const path of PASSTHROUGH) await timed(ctx, `stream time to first byte, ${path.label}`, () => ttfbPhase(ctx, path));
    for (const path of PATHS) {
      if (path.kind !== 'passthrough') {
        const status = await probePath(ctx, path);
        if (status !== 200) continue;
        await timed(ctx, `CPU per request, ${path.label}`, () => gatewayCpuPerRequest(ctx, path));
      }
      await timed(ctx, `CPU per event (bursts), ${path.label}`, () => burstEventsPhase(ctx, path));
      await timed(ctx, `CPU per event (${cfg.paced.streams} paced streams), ${path.label}`, () => pacedEventsPhase(ctx, path));
    }
    // Metering is on, as shipped: the figures above include it, and here is the proof it ran.
    await timed(ctx, 'metering: usage flushed and counted', async () => {
      const requests = await gateway.usage();
      ctx.figures['metering.requests'] = requests;
      if (requests === 0) throw new Error('no request was metered: the usage table is empty');
    });
  } finally {
    await gateway.stop();
    await stub.stop();
  }
  return ctx.figures;
}

async function profileRun(bundle: BuiltBundle): Promise<void> {
  const stub = await startChild('stub-server.ts', {});
  const gateway = await startGateway(bundle, stub).catch(async (error: unknown) => {
    await stub.stop();
    throw error;
  });
  const ctx: PhaseContext = { config, rep: results.reps.length, stub, gateway, figures: {}, errors: results.errors };
  try {
    await timed(ctx, `CPU profiles (${config.profileMs} ms per load)`, async () => {
      results.profiles = await profilePhase(ctx, bundle, config.outDir);
    });
  } finally {
    await gateway.stop();
    await stub.stop();
  }
}

/** The console's API against npm start with a year of seeded usage: figures once per run. */
let consoleTable: string | undefined;
async function consoleRun(): Promise<void> {
  if (!config.console.enabled) return;
  try {
    const result = await consolePhase(config, log);
    for (const [name, value] of Object.entries(result.figures)) results.once[name] = [value];
    results.errors.push(...result.errors);
    consoleTable = result.table;
  } catch (error) {
    results.errors.push(`console: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  }
}

async function main(): Promise<void> {
  mkdirSync(config.outDir, { recursive: true });
  if (config.consoleOnly) return consoleRun();
  log('building the handler bundle (esbuild, production options)');
  const bundle = await buildBundle();
  try {
    await measure(bundle);
  } finally {
    removeBundle(bundle);
  }
  await consoleRun();
}

async function measure(bundle: BuiltBundle): Promise<void> {
  results.once['bundle.bytes'] = [bundle.bytes];
  results.once['bundle.gzip'] = [bundle.gzipBytes];
  log(`cold import: ${config.coldImports} fresh processes`);
  const cold = await measureColdImport(bundle.path, config.coldImports);
  results.once['cold.import'] = cold.importMs;
  results.once['cold.process'] = cold.processMs;
  results.once['cold.bareNode'] = cold.bareNodeMs;

  for (let rep = 0; rep < config.reps; rep++) results.reps.push(await repetition(rep, bundle, config));
  if (config.profile) await profileRun(bundle);
  if (config.lambdaProfile) {
    try {
      results.lambdaProfile = await profileLambda(config, bundle, config.outDir, log);
    } catch (error) {
      results.errors.push(`Lambda profile: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
  }
  if (config.lambda.enabled) {
    try {
      results.lambda = await measureLambdaSizes(config, bundle, log);
    } catch (error) {
      results.errors.push(`Lambda sizes: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
  }
}

try {
  await main();
} catch (error) {
  results.errors.push(`run aborted: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
}
results.durationS = (Date.now() - startedAt.getTime()) / 1000;
const file = writeReport(results);
for (const profile of results.profiles) console.log(`\n${formatProfile(profile)}`);
if (results.lambdaProfile) console.log(`\n${formatLambdaProfile(results.lambdaProfile)}`);
if (consoleTable) console.log(`\n${consoleTable}`);
if (results.lambda) {
  const report = formatLambdaReport(results.lambda, config.smoke);
  console.log(`\n${report}`);
  writeFileSync(join(config.outDir, config.smoke ? 'lambda-sizes-smoke.md' : 'lambda-sizes.md'), `${report}\n`);
}
console.log(`\nWrote ${file} (${results.durationS.toFixed(0)} s).`);
if (results.errors.length > 0) {
  console.error(`\nA measurement path broke (${results.errors.length}):\n${results.errors.map((error) => `  - ${error}`).join('\n')}`);
  process.exitCode = 1;
}
