import { setTimeout as sleep } from 'node:timers/promises';
import { closedLoop, holdStreams } from './load.ts';
import { buildRequest, CpuWindow, noteErrors, type PhaseContext } from './phase-context.ts';
import { median } from './stats.ts';
import { eventsPerStream, type BenchPath } from './workloads.ts';

/**
 * Stream phases, all through the gateway (its CPU and memory are what they measure):
 * marginal CPU per event from bursts, steady-state CPU per event from paced streams, and
 * memory per open stream.
 */

/**
 * Marginal CPU per event, the peer method: streams of `large` vs `small` instant deltas at
 * c=32, (CPU per large stream - CPU per small stream) / (events difference). The per-stream
 * cost cancels out. Instant deltas arrive many per socket read, so this is the cost of framing,
 * observing (or translating) and relaying an event, without a read and a write of its own; the
 * paced phase measures one event per read.
 */
export async function burstEventsPhase(ctx: PhaseContext, path: BenchPath): Promise<void> {
  const { concurrency, small, large, warmupMs, measureMs } = ctx.config.burst;
  const perStream: Record<number, { cpuUs: number; events: number }> = {};
  for (const deltas of [small, large]) {
    const shape = { deltas, gapMs: 0 };
    const cpu = new CpuWindow(ctx);
    const run = await closedLoop({
      url: ctx.gateway.url,
      request: buildRequest(ctx, path, 'gateway', shape, true),
      concurrency,
      warmupMs,
      measureMs,
      expect: { status: 200, events: path.kind === 'passthrough' ? eventsPerStream(path, shape) : undefined },
      onWindowStart: () => cpu.start(),
      onWindowEnd: () => cpu.end(),
    });
    noteErrors(ctx, `burst events ${path.id} e${deltas}`, run);
    perStream[deltas] = { cpuUs: cpu.gatewayUs / run.completed, events: run.events / run.completed };
  }
  const a = perStream[small] as { cpuUs: number; events: number };
  const b = perStream[large] as { cpuUs: number; events: number };
  ctx.figures[`cpu.stream.${path.id}`] = a.cpuUs;
  ctx.figures[`cpu.event.burst.${path.id}`] = (b.cpuUs - a.cpuUs) / (b.events - a.events);
}

/**
 * Steady-state CPU per event: `streams` streams paced `gapMs` apart (each event its own socket
 * read and write, as with a real model emitting tokens), all open before the window starts and
 * still running when it ends, so no stream set-up or tear-down is inside the window.
 */
export async function pacedEventsPhase(ctx: PhaseContext, path: BenchPath): Promise<void> {
  const { streams, gapMs, settleMs, windowMs } = ctx.config.paced;
  const openTimeoutMs = 5_000;
  const shape = { deltas: Math.ceil((openTimeoutMs + settleMs + windowMs) / gapMs) + 2, gapMs };
  const held = await holdStreams(ctx.gateway.url, buildRequest(ctx, path, 'gateway', shape, true), streams, 100, openTimeoutMs);
  await sleep(settleMs);
  const cpu = new CpuWindow(ctx);
  await cpu.start();
  const before = held.delivered.events;
  await sleep(windowMs);
  const events = held.delivered.events - before;
  await cpu.end();
  await held.release();
  noteErrors(ctx, `paced events ${path.id}`, held);
  ctx.figures[`cpu.event.paced.${path.id}`] = cpu.gatewayUs / events;
  // The stub writes each event with one write on a timer: a floor for one event through Node.
  ctx.figures[`cpu.event.paced.stub.${path.id}`] = cpu.stubUs / events;
  ctx.figures[`events.rate.paced.${path.id}`] = events / (cpu.wallUs / 1e6);
  ctx.figures[`share.gateway.paced.${path.id}`] = cpu.gatewayUs / cpu.wallUs;
}

interface Memory {
  rss: number;
  heap: number;
}

/**
 * Median RSS and live heap of the gateway and of the stub over `samples` samples, each after a
 * full GC (garbage is not memory per stream). The stub holds the same streams with a bare
 * node:http server: its figure is a floor for what an open stream costs in Node.
 */
async function memoryMedians(ctx: PhaseContext, samples: number, everyMs: number): Promise<{ gateway: Memory; stub: Memory }> {
  const taken: { gateway: Memory[]; stub: Memory[] } = { gateway: [], stub: [] };
  for (let i = 0; i < samples; i++) {
    const [gateway, stub] = await Promise.all([ctx.gateway.sample(true), ctx.stub.sample(true)]);
    taken.gateway.push({ rss: gateway.rssBytes, heap: gateway.heapUsedBytes });
    taken.stub.push({ rss: stub.rssBytes, heap: stub.heapUsedBytes });
    if (i < samples - 1) await sleep(everyMs);
  }
  const medians = (list: Memory[]) => ({ rss: median(list.map((m) => m.rss)), heap: median(list.map((m) => m.heap)) });
  return { gateway: medians(taken.gateway), stub: medians(taken.stub) };
}

/**
 * Memory per open stream: RSS of a fresh, warmed gateway, then RSS while it holds `streams`
 * slowly paced streams (each connection open end to end: client, gateway, stub), divided by
 * the number of streams. Run first in a repetition, on a process that has seen only warm-up.
 */
export async function memoryPhase(ctx: PhaseContext, path: BenchPath): Promise<void> {
  const { streams, burst, gapMs, settleMs, holdMs, sampleEveryMs, openTimeoutMs } = ctx.config.memory;
  const shape = { deltas: Math.ceil((openTimeoutMs + settleMs + holdMs) / gapMs) + 2, gapMs };
  const request = buildRequest(ctx, path, 'gateway', shape, true);
  // Warm-up: code paths compiled, pools and buffers allocated once, not charged to streams.
  const warm = await holdStreams(ctx.gateway.url, request, Math.min(50, streams), burst, openTimeoutMs);
  await sleep(settleMs);
  await warm.release();
  noteErrors(ctx, `memory warm-up ${path.id}`, warm);
  await sleep(settleMs);
  const before = await memoryMedians(ctx, 3, 100);
  const held = await holdStreams(ctx.gateway.url, request, streams, burst, openTimeoutMs);
  await sleep(settleMs);
  const during = await memoryMedians(ctx, Math.max(1, Math.round(holdMs / sampleEveryMs)), sampleEveryMs);
  await held.release();
  noteErrors(ctx, `memory ${path.id}`, held);
  const open = Math.max(1, held.open);
  ctx.figures['memory.rss.before'] = before.gateway.rss;
  ctx.figures['memory.rss.during'] = during.gateway.rss;
  ctx.figures['memory.stream.rss'] = (during.gateway.rss - before.gateway.rss) / open;
  ctx.figures['memory.stream.heap'] = (during.gateway.heap - before.gateway.heap) / open;
  ctx.figures['memory.stream.rss.stub'] = (during.stub.rss - before.stub.rss) / open;
  ctx.figures['memory.streams.open'] = held.open;
  // Let the gateway finish tearing down the streams before the next phase measures it.
  await sleep(settleMs);
}
