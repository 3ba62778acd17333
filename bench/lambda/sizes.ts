import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { measureColdImport, type BuiltBundle } from '../bundle.ts';
import type { BenchConfig } from '../config.ts';
import { RawConnection, serializeRequest, type ResponseRecord } from '../http-client.ts';
import { eventsPerStream, PATHS, requestBody, requestHeaders, requestPath, type BenchPath, type StreamShape } from '../workloads.ts';
import { openCpuQuota, type QuotaGroup } from './cpu-quota.ts';
import { HeapProbe } from './heap-probe.ts';
import { startDeployment, type Deployment } from './deployment.ts';
import { LoadWatch } from './load-watch.ts';

/**
 * Cold start and per-request cost of the deployed gateway at each Lambda memory size (see
 * deployment.ts for what runs, cpu-quota.ts for how a size is emulated). Samples of different
 * sizes are interleaved, so a slow spell on the shared machine spreads over every size instead
 * of landing on one.
 */
export interface SizeResult {
  /** undefined: no CPU quota could be set; the function ran at the machine's full speed. */
  memoryMb: number | undefined;
  /** Share of one CPU the quota allows. */
  share: number;
  /** `await import(bundle)` in a fresh process, ms. */
  importMs: number[];
  /** `node -e ""`, spawn to exit, ms: Node's own start under the same quota. */
  nodeStartMs: number[];
  /**
   * Request sent -> last byte received, the request starting a new on-demand execution
   * environment: Init at one full vCPU, the invocation at the size's share (cpu-quota.ts, INIT_BURST), ms.
   */
  coldMs: number[];
  /** The same with the size's share from process start (no Init burst): the conservative bound, ms. */
  coldThrottledMs: number[];
  /** Of which: process start -> the runtime takes the invocation (Node, runtime client, handler import). */
  initMs: number[];
  /** Of which: the invocation itself (first key lookup, secret read, upstream call), taken -> response complete. */
  firstInvocationMs: number[];
  /**
   * CPU time the runtime process used by the end of that first invocation, its writes after the
   * response included (ms): steadier than wall time on a busy machine, and what the quota divides.
   */
  coldCpuMs: number[];
  /** Warm non-streaming requests, taken -> handler done (the billed duration; the upstream answers at once). */
  warmBilledMs: number[];
  /** The same requests as the client saw them through the Function URL front, ms. */
  warmClientMs: number[];
  /** The same request sent straight to the upstream stub, ms: what the gateway adds is the difference. */
  directClientMs: number[];
  /**
   * Warm requests that each arrive after a pause (PAUSE_MS, longer than the quota's period), as an
   * agent's next turn does: the client's time, and the same request straight to the stub, ms. The
   * back-to-back requests above are the worst case (each may start with the period's quota spent).
   */
  pausedClientMs: number[];
  pausedDirectMs: number[];
  cpuPerRequestUs: number;
  /** Marginal CPU per streamed event, by path id. */
  cpuPerEventUs: Record<string, number>;
  peakRssBytes: number;
  /**
   * What one open stream holds in the warm environment (Lambda runs one stream per environment):
   * live JS memory after a full garbage collection, in the middle of a paced stream minus idle
   * just before it (V8's used heap, and the memory outside it that JS objects hold, such as
   * Buffers), medians of 3 streams; and the runtime process's RSS then, bytes (heap-probe.ts).
   */
  streamHeapBytes: number;
  streamExternalBytes: number;
  streamEnvironmentRssBytes: number;
  throttledMs: number;
}

export interface LambdaResults {
  /** How the sizes were emulated, or why they could not be. */
  method: string;
  sizes: SizeResult[];
  /** Highest share of a core used by processes outside the benchmark during the phase (others' load). */
  othersShare: number;
  loadAverage: { start: number[]; end: number[] };
}

const MESSAGES = PATHS.find((path) => path.id === 'messages') as BenchPath;
const TRANSLATED = PATHS.find((path) => path.id === 'responses-to-messages') as BenchPath;
const INSTANT: StreamShape = { deltas: 0, gapMs: 0 };
/** A pause longer than the CPU quota's 20 ms period (cpu-quota.ts): the next request finds the period's share unspent. */
const PAUSE_MS = 50;
const PAUSED_REQUESTS = 40;

export async function measureLambdaSizes(config: BenchConfig, bundle: BuiltBundle, log: (text: string) => void): Promise<LambdaResults> {
  const quota = openCpuQuota();
  const available = !('unavailable' in quota);
  if (!available) log(`Lambda sizes: NOT emulated, ${quota.unavailable}; measuring once at the machine's full speed instead (run as root on Linux with a cgroup cpu controller for the per-size figures)`);
  const groups: (QuotaGroup | undefined)[] = available ? config.lambda.sizes.map((mb) => quota.group(mb)) : [undefined];
  const results: SizeResult[] = groups.map((group) => ({
    memoryMb: group?.memoryMb,
    share: group?.share ?? Number.NaN,
    importMs: [],
    nodeStartMs: [],
    coldMs: [],
    coldThrottledMs: [],
    initMs: [],
    firstInvocationMs: [],
    coldCpuMs: [],
    warmBilledMs: [],
    warmClientMs: [],
    directClientMs: [],
    pausedClientMs: [],
    pausedDirectMs: [],
    cpuPerRequestUs: Number.NaN,
    cpuPerEventUs: {},
    peakRssBytes: Number.NaN,
    streamHeapBytes: Number.NaN,
    streamExternalBytes: Number.NaN,
    streamEnvironmentRssBytes: Number.NaN,
    throttledMs: Number.NaN,
  }));
  const name = (group: QuotaGroup | undefined) => (group ? `${group.memoryMb} MB` : 'unthrottled');
  const start = loadavg();
  const deployment = await startDeployment(bundle.dir);
  const load = new LoadWatch(deployment);
  try {
    for (let sample = 0; sample < config.lambda.importSamples; sample++) {
      log(`Lambda sizes: bundle import ${sample + 1}/${config.lambda.importSamples} (${groups.map(name).join(', ')})`);
      for (const [i, group] of groups.entries()) {
        const result = results[i] as SizeResult;
        const imported = await measureColdImport(bundle.path, 1, group?.launch);
        result.importMs.push(...imported.importMs);
        result.nodeStartMs.push(...imported.bareNodeMs);
      }
    }
    for (let sample = 0; sample < config.lambda.coldSamples; sample++) {
      log(`Lambda sizes: cold start ${sample + 1}/${config.lambda.coldSamples} (${groups.map(name).join(', ')})`);
      for (const [i, group] of groups.entries()) {
        await load.around(() => coldSample(deployment, group, results[i] as SizeResult));
        if (group) await load.around(() => coldThrottledSample(deployment, group, results[i] as SizeResult));
      }
    }
    for (const [i, group] of groups.entries()) {
      log(`Lambda sizes: warm requests and streams, ${name(group)}`);
      await load.around(() => warmPhase(config, deployment, group, results[i] as SizeResult));
      (results[i] as SizeResult).throttledMs = group ? group.throttledUs() / 1000 : 0;
    }
  } finally {
    await deployment.close();
    if (available) quota.close();
  }
  return { method: available ? quota.method : `none (${quota.unavailable})`, sizes: results, othersShare: load.othersShare, loadAverage: { start, end: loadavg() } };
}

function request(deployment: Deployment, url: URL, path: BenchPath, shape: StreamShape, stream: boolean, target: 'gateway' | 'direct' = 'gateway'): Buffer {
  return serializeRequest(url, requestPath(path, target), requestHeaders(path, deployment.key), requestBody(path, shape, stream));
}

async function send(url: URL, bytes: Buffer, expectEvents?: number): Promise<ResponseRecord> {
  const connection = await RawConnection.open(url);
  try {
    return checked(await connection.send(bytes), expectEvents);
  } finally {
    connection.destroy();
  }
}

function checked(record: ResponseRecord, expectEvents?: number): ResponseRecord {
  if (record.status !== 200) throw new Error(`the function answered ${record.status}`);
  if (record.bodyBytes === 0) throw new Error('the function answered with an empty body');
  if (expectEvents !== undefined && record.events !== expectEvents) throw new Error(`a stream carried ${record.events} events, expected ${expectEvents}`);
  return record;
}

interface ColdStart {
  /** Request sent -> last byte received, ms. */
  coldMs: number;
  /** Process start -> the runtime takes the invocation, ms. */
  initMs: number;
  /** The invocation taken -> response complete, ms. */
  firstInvocationMs: number;
  /** CPU time of the runtime process by then, its writes after the response included, µs. */
  cpuUs: number;
}

/**
 * One new execution environment's first request. `initBurst`: Init at a full vCPU and the
 * size's share from the runtime's first poll for an invocation on, as Lambda runs an on-demand
 * environment; otherwise the size's share from process start.
 */
async function coldStart(deployment: Deployment, group: QuotaGroup | undefined, initBurst: boolean): Promise<ColdStart> {
  if (initBurst) group?.fullCpu();
  try {
    const fn = await deployment.startFunction({ memoryMb: group?.memoryMb ?? 1769, launch: group?.launch, ...(initBurst && group ? { onInitDone: () => group.sizeCpu() } : {}) });
    try {
      const record = await send(fn.url, request(deployment, fn.url, MESSAGES, INSTANT, false)).catch((error: Error) => {
        throw new Error(`${error.message}; the function logged: ${fn.lambda.stdout.slice(-3).join(' | ')} ${fn.lambda.stderr.slice(-3).join(' | ')}`);
      });
      const invocation = fn.invocations[0];
      if (invocation?.takenAt === undefined || invocation.finishedAt === undefined) throw new Error('the cold invocation was not timed');
      await fn.logged(1);
      return { coldMs: record.endAt - record.startAt, initMs: invocation.takenAt - record.startAt, firstInvocationMs: invocation.finishedAt - invocation.takenAt, cpuUs: fn.cpuUs() };
    } finally {
      await fn.close();
    }
  } finally {
    if (initBurst) group?.sizeCpu();
  }
}

/** An on-demand cold start, recorded in full. */
async function coldSample(deployment: Deployment, group: QuotaGroup | undefined, result: SizeResult): Promise<number> {
  const cold = await coldStart(deployment, group, true);
  result.coldMs.push(cold.coldMs);
  result.initMs.push(cold.initMs);
  result.firstInvocationMs.push(cold.firstInvocationMs);
  result.coldCpuMs.push(cold.cpuUs / 1000);
  return cold.cpuUs;
}

/** A cold start throttled from process start (no Init burst): only its total is kept. */
async function coldThrottledSample(deployment: Deployment, group: QuotaGroup, result: SizeResult): Promise<number> {
  const cold = await coldStart(deployment, group, false);
  result.coldThrottledMs.push(cold.coldMs);
  return cold.cpuUs;
}

/** One warm environment: CPU and billed time per request, CPU per streamed event, peak memory. */
async function warmPhase(config: BenchConfig, deployment: Deployment, group: QuotaGroup | undefined, result: SizeResult): Promise<number> {
  const { warmupRequests, warmRequests, streams } = config.lambda;
  const probe = new HeapProbe(join(tmpdir(), `gateway-bench-heap-${process.pid}-${group?.memoryMb ?? 'full'}`));
  const fn = await deployment.startFunction({ memoryMb: group?.memoryMb ?? 1769, launch: group?.launch, environment: probe.environment() });
  try {
    const connection = await RawConnection.open(fn.url);
    const direct = await RawConnection.open(deployment.stub.url);
    let logged = 0;
    const warm = request(deployment, fn.url, MESSAGES, INSTANT, false);
    const straight = request(deployment, deployment.stub.url, MESSAGES, INSTANT, false, 'direct');
    // The cold start, then requests for the JIT, none of them counted.
    for (let i = 0; i <= warmupRequests; i++) checked(await connection.send(warm));
    logged += warmupRequests + 1;
    await fn.logged(logged);
    const before = fn.cpuUs();
    const first = fn.invocations.length;
    for (let i = 0; i < warmRequests; i++) {
      const record = checked(await connection.send(warm));
      result.warmClientMs.push(record.endAt - record.startAt);
      const straightRecord = checked(await direct.send(straight));
      result.directClientMs.push(straightRecord.endAt - straightRecord.startAt);
    }
    logged += warmRequests;
    await fn.logged(logged);
    result.cpuPerRequestUs = (fn.cpuUs() - before) / warmRequests;
    const paused = config.smoke ? 2 : PAUSED_REQUESTS;
    for (let i = 0; i < paused; i++) {
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
      const record = checked(await connection.send(warm));
      result.pausedClientMs.push(record.endAt - record.startAt);
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
      const straightRecord = checked(await direct.send(straight));
      result.pausedDirectMs.push(straightRecord.endAt - straightRecord.startAt);
    }
    logged += paused;
    await fn.logged(logged);
    for (const invocation of fn.invocations.slice(first)) {
      if (invocation.takenAt !== undefined && invocation.releasedAt !== undefined) result.warmBilledMs.push(invocation.releasedAt - invocation.takenAt);
    }

    // Marginal CPU per event: the same number of streams, short and long; the difference is events.
    for (const path of [MESSAGES, TRANSLATED]) {
      const cpuOf = async (deltas: number) => {
        const shape = { deltas, gapMs: 0 };
        const bytes = request(deployment, fn.url, path, shape, true);
        // A translated stream has the client format's own framing; only its completeness is checked.
        const events = path.kind === 'passthrough' ? eventsPerStream(path, shape) : undefined;
        // A few unmeasured first, so the stream code is as warm as the request code.
        for (let i = 0; i < 3; i++) checked(await connection.send(bytes), events);
        logged += 3;
        await fn.logged(logged);
        const cpuBefore = fn.cpuUs();
        for (let i = 0; i < streams.count; i++) checked(await connection.send(bytes), events);
        logged += streams.count;
        await fn.logged(logged);
        return (fn.cpuUs() - cpuBefore) / streams.count;
      };
      const small = await cpuOf(streams.small);
      const large = await cpuOf(streams.large);
      result.cpuPerEventUs[path.id] = (large - small) / (streams.large - streams.small);
    }
    result.peakRssBytes = fn.peakRssBytes();
    Object.assign(result, await streamMemory(deployment, fn, probe, connection, config.smoke ? 4 : 20, config.smoke ? 1 : 3));
    connection.destroy();
    direct.destroy();
    return fn.cpuUs();
  } finally {
    await fn.close();
  }
}

/**
 * What an open stream holds inside the runtime (HeapProbe.streamMemory): one paced stream at a
 * time, an event every 50 ms, as a model writes.
 */
async function streamMemory(deployment: Deployment, fn: Awaited<ReturnType<Deployment['startFunction']>>, probe: HeapProbe, connection: RawConnection, deltas: number, samples: number): Promise<Pick<SizeResult, 'streamHeapBytes' | 'streamExternalBytes' | 'streamEnvironmentRssBytes'>> {
  const shape = { deltas, gapMs: 50 };
  const stream = async () => checked(await connection.send(request(deployment, fn.url, MESSAGES, shape, true)), eventsPerStream(MESSAGES, shape));
  const held = await probe.streamMemory(fn.lambda.starts.at(-1)?.pid as number, stream, (deltas * shape.gapMs) / 2, () => fn.rssBytes(), samples);
  return { streamHeapBytes: held.heapBytes, streamExternalBytes: held.externalBytes, streamEnvironmentRssBytes: held.environmentRssBytes };
}
