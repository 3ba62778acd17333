import { readFileSync } from 'node:fs';
import type { ProcessSample } from './child-ipc.ts';
import type { BenchConfig } from './config.ts';
import type { CheckedRun } from './load.ts';
import type { BenchChild } from './processes.ts';
import { requestBody, requestHeaders, requestPath, type BenchPath, type StreamShape, type Target } from './workloads.ts';
import { serializeRequest } from './http-client.ts';

/** What every phase of one repetition works with, and where it puts its figures. */
export interface PhaseContext {
  config: BenchConfig;
  rep: number;
  stub: BenchChild;
  gateway: BenchChild;
  /** Flat figure name -> value for this repetition, e.g. `rps.messages.direct`. */
  figures: Record<string, number>;
  /** Measurement paths that broke (wrong status, short stream, crash): these fail the run. */
  errors: string[];
}

/** Direct and gateway alternate which goes first, so slow drift on the machine cancels out. */
export function targetOrder(rep: number): Target[] {
  return rep % 2 === 0 ? ['direct', 'gateway'] : ['gateway', 'direct'];
}

export function urlOf(ctx: PhaseContext, target: Target): URL {
  return target === 'gateway' ? ctx.gateway.url : ctx.stub.url;
}

export function buildRequest(ctx: PhaseContext, path: BenchPath, target: Target, shape: StreamShape, stream: boolean): Buffer {
  const url = urlOf(ctx, target);
  return serializeRequest(url, requestPath(path, target), requestHeaders(path, ctx.gateway.key), requestBody(path, shape, stream));
}

/** Keeps the highest share of a core used by other processes during any measured window. */
function noteOtherLoad(ctx: PhaseContext, share: number): void {
  if (Number.isFinite(share)) ctx.figures['share.others.max'] = Math.max(ctx.figures['share.others.max'] ?? 0, share);
}

export function noteErrors(ctx: PhaseContext, what: string, run: CheckedRun): void {
  const where = ctx.rep < ctx.config.reps ? `rep ${ctx.rep + 1}` : 'profile';
  if (run.errors > 0) ctx.errors.push(`${where}, ${what}: ${run.errors} bad response(s), first: ${run.firstError}`);
}

/** Busy CPU time of the whole machine so far (all cores, µs), or NaN where /proc is missing. */
export function machineBusyUs(): number {
  try {
    const fields = (/^cpu\s+(.+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1] ?? '').split(/\s+/).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already in user).
    const busy = fields.slice(0, 8).reduce((sum, value, i) => (i === 3 || i === 4 ? sum : sum + value), 0);
    return (busy * 1e6) / 100;
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU time of the gateway, the stub and this process (the load generator) over one window, and
 * of everything else on the machine: other work during a window makes its figures unreliable.
 */
export class CpuWindow {
  #gateway: ProcessSample | undefined;
  #stub: ProcessSample | undefined;
  #self = process.cpuUsage();
  #at = performance.now();
  #machine = 0;
  gatewayUs = 0;
  /** CPU used by processes outside the benchmark (clock-tick resolution: about 10 ms). */
  othersUs = 0;
  stubUs = 0;
  selfUs = 0;
  wallUs = 0;
  rssBytes = 0;
  readonly #ctx: PhaseContext;

  constructor(ctx: PhaseContext) {
    this.#ctx = ctx;
  }

  async start(): Promise<void> {
    [this.#gateway, this.#stub] = await Promise.all([this.#ctx.gateway.sample(), this.#ctx.stub.sample()]);
    this.#self = process.cpuUsage();
    this.#machine = machineBusyUs();
    this.#at = performance.now();
  }

  async end(): Promise<void> {
    const [gateway, stub] = await Promise.all([this.#ctx.gateway.sample(), this.#ctx.stub.sample()]);
    const self = process.cpuUsage(this.#self);
    this.wallUs = (performance.now() - this.#at) * 1000;
    this.gatewayUs = gateway.cpuUs - (this.#gateway as ProcessSample).cpuUs;
    this.stubUs = stub.cpuUs - (this.#stub as ProcessSample).cpuUs;
    this.selfUs = self.user + self.system;
    this.rssBytes = gateway.rssBytes;
    this.othersUs = Math.max(0, machineBusyUs() - this.#machine - this.gatewayUs - this.stubUs - this.selfUs);
    noteOtherLoad(this.#ctx, this.othersUs / this.wallUs);
  }
}
