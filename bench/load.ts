import { setTimeout as sleep } from 'node:timers/promises';
import { RawConnection, type DeliveryCounter, type ResponseRecord } from './http-client.ts';

/**
 * The three load shapes the phases use: a closed loop at fixed concurrency, sequential requests
 * on one connection, and a set of streams held open together. Each checks every response
 * (status, and for streams the number of events) and counts what was wrong, so a broken path
 * shows as an error instead of as a fast number.
 */
export interface Expectation {
  status: number;
  /** Exact SSE events per response, when known (passthrough); undefined for JSON or unknown. */
  events?: number;
}

export interface CheckedRun {
  errors: number;
  firstError: string | undefined;
}

function check(record: ResponseRecord, expect: Expectation, run: CheckedRun): boolean {
  let problem: string | undefined;
  if (record.status !== expect.status) problem = `status ${record.status}, expected ${expect.status}`;
  else if (expect.events !== undefined && record.events !== expect.events) problem = `${record.events} events, expected ${expect.events}`;
  if (problem === undefined) return true;
  run.errors++;
  run.firstError ??= problem;
  return false;
}

function fail(run: CheckedRun, error: unknown): void {
  run.errors++;
  run.firstError ??= error instanceof Error ? error.message : String(error);
}

export interface ClosedLoopOptions {
  url: URL;
  request: Buffer;
  concurrency: number;
  warmupMs: number;
  measureMs: number;
  expect: Expectation;
  /** Called at the edges of the measured window (e.g. to read the gateway's CPU time). */
  onWindowStart?: () => Promise<void>;
  onWindowEnd?: () => Promise<void>;
}

export interface ClosedLoopResult extends CheckedRun {
  completed: number;
  events: number;
  windowMs: number;
  /** Latency (ms) of each request completed inside the window. */
  latencies: number[];
}

/** `concurrency` connections, each sending its next request as soon as the last one ended. */
export async function closedLoop(options: ClosedLoopOptions): Promise<ClosedLoopResult> {
  const result: ClosedLoopResult = { completed: 0, events: 0, windowMs: 0, latencies: [], errors: 0, firstError: undefined };
  let measuring = false;
  let stopping = false;
  const worker = async () => {
    let connection: RawConnection | undefined;
    while (!stopping) {
      try {
        connection ??= await RawConnection.open(options.url);
        const record = await connection.send(options.request);
        if (!check(record, options.expect, result) || !measuring) continue;
        result.completed++;
        result.events += record.events;
        result.latencies.push(record.endAt - record.startAt);
      } catch (error) {
        fail(result, error);
        connection?.destroy();
        connection = undefined;
        // A refused or reset connection must not become a tight retry loop.
        await sleep(10);
      }
    }
    connection?.destroy();
  };
  const workers = Array.from({ length: options.concurrency }, worker);
  await sleep(options.warmupMs);
  await options.onWindowStart?.();
  const startedAt = performance.now();
  measuring = true;
  await sleep(options.measureMs);
  measuring = false;
  result.windowMs = performance.now() - startedAt;
  await options.onWindowEnd?.();
  stopping = true;
  await Promise.all(workers);
  return result;
}

export interface SequentialResult extends CheckedRun {
  records: ResponseRecord[];
}

/** `warmup` then `count` requests one after another on one keep-alive connection. */
export async function sequential(url: URL, request: Buffer, warmup: number, count: number, expect: Expectation): Promise<SequentialResult> {
  const result: SequentialResult = { records: [], errors: 0, firstError: undefined };
  let connection: RawConnection | undefined;
  for (let i = 0; i < warmup + count; i++) {
    try {
      connection ??= await RawConnection.open(url);
      const record = await connection.send(request);
      if (check(record, expect, result) && i >= warmup) result.records.push(record);
    } catch (error) {
      fail(result, error);
      connection?.destroy();
      connection = undefined;
    }
  }
  connection?.destroy();
  return result;
}

export interface HeldStreams extends CheckedRun {
  /** Streams that delivered their first byte (are open end to end). */
  open: number;
  /** Events delivered so far, across all held streams. */
  delivered: DeliveryCounter;
  /** Ends every stream by closing its connection (the gateway sees client disconnects). */
  release(): Promise<void>;
}

/**
 * Opens `count` streams in bursts of `burst` connections and resolves once every stream has
 * delivered its first byte, or when `timeoutMs` runs out (then `open` says how many made it).
 */
export async function holdStreams(url: URL, request: Buffer, count: number, burst: number, timeoutMs: number): Promise<HeldStreams> {
  const delivered: DeliveryCounter = { events: 0, bytes: 0 };
  const held: HeldStreams = { open: 0, delivered, errors: 0, firstError: undefined, release: async () => {} };
  const connections: RawConnection[] = [];
  const finished: Promise<void>[] = [];
  let allOpen: () => void = () => {};
  const opened = new Promise<void>((resolve) => (allOpen = resolve));
  const onFirstBody = () => {
    if (++held.open === count) allOpen();
  };
  const deadline = performance.now() + timeoutMs;
  for (let start = 0; start < count && performance.now() < deadline; start += burst) {
    const batch = await Promise.allSettled(Array.from({ length: Math.min(burst, count - start) }, () => RawConnection.open(url, delivered)));
    for (const outcome of batch) {
      if (outcome.status === 'rejected') {
        fail(held, outcome.reason);
        continue;
      }
      connections.push(outcome.value);
      // A stream that ends before release was too short for the phase: that is an error too.
      finished.push(outcome.value.send(request, onFirstBody).then(
        (record) => void fail(held, new Error(`a held stream ended early (status ${record.status})`)),
        () => undefined,
      ));
    }
  }
  await Promise.race([opened, sleep(Math.max(0, deadline - performance.now()))]);
  if (held.open < count) fail(held, new Error(`only ${held.open} of ${count} streams opened in ${timeoutMs} ms`));
  held.release = async () => {
    for (const connection of connections) connection.destroy();
    await Promise.all(finished);
  };
  return held;
}
