import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BuiltBundle } from './bundle.ts';
import { closedLoop, holdStreams } from './load.ts';
import { buildRequest, noteErrors, type PhaseContext } from './phase-context.ts';
import { summarizeProfile, type ProfileSummary } from './profile-summary.ts';
import { PASSTHROUGH } from './workloads.ts';

/**
 * CPU profiles of the gateway under the two loads that matter: non-streaming requests at c=32
 * and paced streams (one event per read). Profiling slows the process, so this runs on its own
 * gateway after the measured repetitions and its figures are not used anywhere else.
 */
export async function profilePhase(ctx: PhaseContext, bundle: BuiltBundle, outDir: string): Promise<ProfileSummary[]> {
  const summaries: ProfileSummary[] = [];
  const durationMs = ctx.config.profileMs;
  for (const path of PASSTHROUGH) {
    const file = resolve(join(outDir, `profile-requests-${path.id}.cpuprofile`));
    const run = await closedLoop({
      url: ctx.gateway.url,
      request: buildRequest(ctx, path, 'gateway', { deltas: 0, gapMs: 0 }, false),
      concurrency: ctx.config.throughput.concurrency,
      warmupMs: ctx.config.throughput.warmupMs,
      measureMs: durationMs,
      expect: { status: 200 },
      onWindowStart: () => ctx.gateway.profileStart(),
      onWindowEnd: () => ctx.gateway.profileStop(file),
    });
    noteErrors(ctx, `profile requests ${path.id}`, run);
    summaries.push(summarizeProfile(`non-streaming ${path.label}, c=${ctx.config.throughput.concurrency}`, file, bundle.path, bundle.mapPath));
  }
  for (const path of PASSTHROUGH) {
    const file = resolve(join(outDir, `profile-streams-${path.id}.cpuprofile`));
    const { streams, gapMs, settleMs } = ctx.config.paced;
    const shape = { deltas: Math.ceil((5_000 + settleMs + durationMs) / gapMs) + 2, gapMs };
    const held = await holdStreams(ctx.gateway.url, buildRequest(ctx, path, 'gateway', shape, true), streams, 100, 5_000);
    await sleep(settleMs);
    await ctx.gateway.profileStart();
    await sleep(durationMs);
    await ctx.gateway.profileStop(file);
    await held.release();
    noteErrors(ctx, `profile streams ${path.id}`, held);
    summaries.push(summarizeProfile(`${streams} paced streams ${path.label}, one event per ${gapMs} ms each`, file, bundle.path, bundle.mapPath));
  }
  return summaries;
}
