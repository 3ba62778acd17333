import { RawConnection } from './http-client.ts';
import { closedLoop, sequential } from './load.ts';
import { pacedEventsPhase } from './phases-streams.ts';
import { startChild } from './processes.ts';
import { buildRequest, CpuWindow, noteErrors, targetOrder, urlOf, type PhaseContext } from './phase-context.ts';
import { percentile } from './stats.ts';
import { eventsPerStream, type BenchPath } from './workloads.ts';

/**
 * Request-level phases, each measuring direct-to-stub and through-gateway back to back in the
 * same repetition: throughput and latency at fixed concurrency (non-streaming), latency at
 * concurrency 1, and time to first byte of streams.
 */
const NO_STREAM = { deltas: 0, gapMs: 0 };

/**
 * Closed loop at c=32, non-streaming: requests per second, latency p50/p99 and, for the gateway,
 * CPU per request. Each process's CPU share is kept too: a load generator or stub near 100%
 * would mean the figure measures them, not the gateway.
 */
export async function throughputPhase(ctx: PhaseContext, path: BenchPath): Promise<void> {
  const { concurrency, warmupMs, measureMs } = ctx.config.throughput;
  const f = ctx.figures;
  for (const target of targetOrder(ctx.rep)) {
    const cpu = new CpuWindow(ctx);
    const run = await closedLoop({
      url: urlOf(ctx, target),
      request: buildRequest(ctx, path, target, NO_STREAM, false),
      concurrency,
      warmupMs,
      measureMs,
      expect: { status: 200 },
      onWindowStart: () => cpu.start(),
      onWindowEnd: () => cpu.end(),
    });
    noteErrors(ctx, `throughput ${path.id} ${target}`, run);
    f[`rps.${path.id}.${target}`] = run.completed / (run.windowMs / 1000);
    f[`c32.p50.${path.id}.${target}`] = percentile(run.latencies, 50);
    f[`c32.p99.${path.id}.${target}`] = percentile(run.latencies, 99);
    f[`share.loadgen.${path.id}.${target}`] = cpu.selfUs / cpu.wallUs;
    f[`share.stub.${path.id}.${target}`] = cpu.stubUs / cpu.wallUs;
    if (target === 'gateway') {
      f[`cpu.request.${path.id}`] = cpu.gatewayUs / run.completed;
      f[`share.gateway.${path.id}`] = cpu.gatewayUs / cpu.wallUs;
    }
  }
  f[`ratio.${path.id}`] = f[`rps.${path.id}.gateway`]! / f[`rps.${path.id}.direct`]!;
  f[`added.c32.p50.${path.id}`] = f[`c32.p50.${path.id}.gateway`]! - f[`c32.p50.${path.id}.direct`]!;
  f[`added.c32.p99.${path.id}`] = f[`c32.p99.${path.id}.gateway`]! - f[`c32.p99.${path.id}.direct`]!;
}

/**
 * Unmeasured load on every passthrough path, through the gateway (so the stub behind it too),
 * before the first measured phase. Right after the memory phase a process is not yet at its
 * steady state, and without this the first path measured paid about 90 us more per request than
 * the same path measured second (both orders run back to back, docs/performance.md).
 */
export async function settlePhase(ctx: PhaseContext, paths: readonly BenchPath[]): Promise<void> {
  const { concurrency, warmupMs } = ctx.config.throughput;
  for (const path of paths) {
    const run = await closedLoop({ url: ctx.gateway.url, request: buildRequest(ctx, path, 'gateway', NO_STREAM, false), concurrency, warmupMs: warmupMs * 2, measureMs: warmupMs / 4, expect: { status: 200 } });
    noteErrors(ctx, `settle ${path.id}`, run);
  }
}

/** Concurrency 1, non-streaming: the latency a single client sees, and what the gateway adds. */
export async function latencyPhase(ctx: PhaseContext, path: BenchPath): Promise<void> {
  const { warmupMs, measureMs } = ctx.config.latency;
  const f = ctx.figures;
  for (const target of targetOrder(ctx.rep)) {
    const cpu = new CpuWindow(ctx);
    const run = await closedLoop({
      url: urlOf(ctx, target),
      request: buildRequest(ctx, path, target, NO_STREAM, false),
      concurrency: 1,
      warmupMs,
      measureMs,
      expect: { status: 200 },
      onWindowStart: () => cpu.start(),
      onWindowEnd: () => cpu.end(),
    });
    noteErrors(ctx, `latency c=1 ${path.id} ${target}`, run);
    f[`c1.p50.${path.id}.${target}`] = percentile(run.latencies, 50);
    f[`c1.p99.${path.id}.${target}`] = percentile(run.latencies, 99);
  }
  f[`added.c1.p50.${path.id}`] = f[`c1.p50.${path.id}.gateway`]! - f[`c1.p50.${path.id}.direct`]!;
  f[`added.c1.p99.${path.id}`] = f[`c1.p99.${path.id}.gateway`]! - f[`c1.p99.${path.id}.direct`]!;
}

/**
 * Sequential streams from an instant upstream: time to the first body byte (the first SSE event)
 * and to the end of the stream. A fixed delay anywhere on the stream path would show in both.
 */
export async function ttfbPhase(ctx: PhaseContext, path: BenchPath): Promise<void> {
  const { warmup, count, deltas } = ctx.config.ttfb;
  const shape = { deltas, gapMs: 0 };
  const f = ctx.figures;
  for (const target of targetOrder(ctx.rep)) {
    const request = buildRequest(ctx, path, target, shape, true);
    const cpu = new CpuWindow(ctx);
    await cpu.start();
    const run = await sequential(urlOf(ctx, target), request, warmup, count, { status: 200, events: eventsPerStream(path, shape) });
    await cpu.end();
    noteErrors(ctx, `stream TTFB ${path.id} ${target}`, run);
    const ttfb = run.records.map((record) => record.firstBodyAt - record.startAt);
    const total = run.records.map((record) => record.endAt - record.startAt);
    f[`ttfb.p50.${path.id}.${target}`] = percentile(ttfb, 50);
    f[`ttfb.p99.${path.id}.${target}`] = percentile(ttfb, 99);
    f[`stream.p50.${path.id}.${target}`] = percentile(total, 50);
  }
  f[`added.ttfb.p50.${path.id}`] = f[`ttfb.p50.${path.id}.gateway`]! - f[`ttfb.p50.${path.id}.direct`]!;
  f[`added.ttfb.p99.${path.id}`] = f[`ttfb.p99.${path.id}.gateway`]! - f[`ttfb.p99.${path.id}.direct`]!;
  f[`added.stream.p50.${path.id}`] = f[`stream.p50.${path.id}.gateway`]! - f[`stream.p50.${path.id}.direct`]!;
}

/**
 * Whether the gateway serves a path yet (translated paths answer 501 until translation lands).
 * Returns the status of one non-streaming request; only 200 paths are measured further.
 */
export async function probePath(ctx: PhaseContext, path: BenchPath): Promise<number> {
  const connection = await RawConnection.open(ctx.gateway.url);
  try {
    const { status } = await connection.send(buildRequest(ctx, path, 'gateway', NO_STREAM, false));
    ctx.figures[`status.${path.id}`] = status;
    return status;
  } finally {
    connection.destroy();
  }
}

/** CPU per request through the gateway alone, for paths with no direct equivalent (translated). */
export async function gatewayCpuPerRequest(ctx: PhaseContext, path: BenchPath): Promise<void> {
  const { concurrency, warmupMs, measureMs } = ctx.config.throughput;
  const cpu = new CpuWindow(ctx);
  const run = await closedLoop({
    url: ctx.gateway.url,
    request: buildRequest(ctx, path, 'gateway', NO_STREAM, false),
    concurrency,
    warmupMs,
    measureMs: measureMs / 2,
    expect: { status: 200 },
    onWindowStart: () => cpu.start(),
    onWindowEnd: () => cpu.end(),
  });
  noteErrors(ctx, `cpu per request ${path.id}`, run);
  ctx.figures[`cpu.request.${path.id}`] = cpu.gatewayUs / run.completed;
}

/**
 * The floors under the gateway (see floor-server.ts), measured like it: c=32 throughput and CPU
 * per request, and for the bare proxy also CPU per paced event. They bound what any handler can
 * reach on this harness; the gateway's own cost is what it adds above them.
 */
export async function floorPhase(ctx: PhaseContext, path: BenchPath): Promise<void> {
  const { concurrency, warmupMs, measureMs } = ctx.config.throughput;
  for (const floor of ['emulation', 'middy', 'proxy']) {
    const child = await startChild('floor-server.ts', { FLOOR: floor, BENCH_STUB_URL: ctx.stub.url.origin });
    try {
      const floorCtx: PhaseContext = { ...ctx, gateway: child };
      const cpu = new CpuWindow(floorCtx);
      const run = await closedLoop({
        url: child.url,
        request: buildRequest(floorCtx, path, 'gateway', NO_STREAM, false),
        concurrency,
        warmupMs,
        measureMs,
        expect: { status: 200 },
        onWindowStart: () => cpu.start(),
        onWindowEnd: () => cpu.end(),
      });
      noteErrors(ctx, `floor ${floor}`, run);
      const rps = run.completed / (run.windowMs / 1000);
      ctx.figures[`rps.floor.${floor}`] = rps;
      ctx.figures[`ratio.floor.${floor}`] = rps / ctx.figures[`rps.${path.id}.direct`]!;
      ctx.figures[`cpu.request.floor.${floor}`] = cpu.gatewayUs / run.completed;
      if (floor === 'proxy') {
        // The same paced streams as the gateway's phase: a floor for relaying one event.
        const proxied: PhaseContext = { ...floorCtx, figures: {} };
        await pacedEventsPhase(proxied, path);
        ctx.figures['cpu.event.paced.floor.proxy'] = proxied.figures[`cpu.event.paced.${path.id}`] ?? Number.NaN;
      }
    } finally {
      await child.stop();
    }
  }
}
