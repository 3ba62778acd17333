import type { Usage } from '../observability/usage.ts';
import type { DayUsage, DynamoUsageStore, UsageTotals } from './usage-store.ts';
import { COUNTERS, counterValues, utcDay } from './usage-table.ts';

export interface UsageRecorderOptions {
  /**
   * 0: every request's usage is written before `record` resolves (Lambda: the invocation must not
   * end with work pending). Above 0: usage is added up in memory per key, model and UTC day and
   * written every `flushMs` (a long-running server: one write per item per interval, whatever
   * the request rate; a kill -9 loses at most one interval).
   */
  flushMs: number;
  /** Distinct key/model/day items held before `record` waits for a flush (backpressure). */
  maxPendingItems?: number;
  /** Writes in flight at once during a flush. */
  writeConcurrency?: number;
  /** Told about failed writes (their counters are kept and retried). */
  onWriteError?: (error: unknown, items: number) => void;
}

interface PendingItem {
  keyId: string;
  day: string;
  model: string;
  counters: Partial<UsageTotals>;
}

/**
 * Usage on its way to the usage table. The store serializes writes to one item (DynamoDB, and
 * dynalite even more so), so writing every request at a high rate queues without bound; adding
 * up per item bounds the queue by the number of items instead. Budget checks see the counters not
 * written yet through `days`, so limits hold on this instance between flushes.
 */
export class UsageRecorder {
  readonly #store: Pick<DynamoUsageStore, 'add' | 'days' | 'admitRequest' | 'acquireLease' | 'releaseLease'>;
  readonly #options: Required<Omit<UsageRecorderOptions, 'onWriteError'>> & Pick<UsageRecorderOptions, 'onWriteError'>;
  #pending = new Map<string, PendingItem>();
  /** Taken out of #pending by the flush under way; each leaves as its write succeeds. */
  #inFlight = new Map<string, PendingItem>();
  #flushing: Promise<void> | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(store: Pick<DynamoUsageStore, 'add' | 'days' | 'admitRequest' | 'acquireLease' | 'releaseLease'>, options: UsageRecorderOptions) {
    this.#store = store;
    this.#options = { maxPendingItems: 10_000, writeConcurrency: 16, ...options };
    if (options.flushMs > 0) {
      this.#timer = setInterval(() => void this.flush(), options.flushMs);
      this.#timer.unref();
    }
  }

  /** Counts one request, its usage and its cost (micro-dollars) for the key, model and the UTC day of `at`. */
  async record(keyId: string, model: string, usage: Usage | undefined, at: Date, costMicroUsd = 0): Promise<void> {
    const counters = counterValues(usage, costMicroUsd);
    const day = utcDay(at);
    if (this.#options.flushMs === 0) return this.#store.add(keyId, day, model, counters, at);
    while (this.#pending.size >= this.#options.maxPendingItems && !this.#pending.has(itemKey(keyId, day, model))) await this.flush();
    this.#merge({ keyId, day, model, counters });
  }

  /** Recorded day items of the key from `fromDay` on, plus what this instance has not written yet. */
  async days(keyId: string, fromDay: string): Promise<DayUsage[]> {
    const written = await this.#store.days(keyId, fromDay);
    const unwritten = [...this.#pending.values(), ...this.#inFlight.values()].filter((item) => item.keyId === keyId && item.day >= fromDay);
    if (unwritten.length === 0) return written;
    return [...written, ...unwritten.map((item) => ({ keyId, day: item.day, model: item.model, ...zeroTotals(), ...item.counters }))];
  }

  admitRequest(keyId: string, limit: number, at: Date): Promise<boolean> {
    return this.#store.admitRequest(keyId, limit, at);
  }

  /** Leases on requests in progress are never batched: each instance must see every other's at once. */
  acquireLease(keyId: string, leaseId: string, cap: number, expiresAt: Date, now: Date): Promise<boolean> {
    return this.#store.acquireLease(keyId, leaseId, cap, expiresAt, now);
  }

  releaseLease(keyId: string, leaseId: string, expiresAt: Date): Promise<void> {
    return this.#store.releaseLease(keyId, leaseId, expiresAt);
  }

  /** Items not yet written (for tests and the shutdown message). */
  get pendingItems(): number {
    return this.#pending.size + this.#inFlight.size;
  }

  /** Writes everything added so far; concurrent calls share one flush. Failed items stay pending. */
  flush(): Promise<void> {
    this.#flushing ??= this.#writePending().finally(() => (this.#flushing = undefined));
    return this.#flushing;
  }

  /** Stops the interval and writes until nothing is pending or `timeoutMs` has passed (the store may be down). */
  async close(timeoutMs = 10_000): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    const until = Date.now() + timeoutMs;
    while (this.pendingItems > 0 && Date.now() < until) {
      await this.flush();
      if (this.#pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async #writePending(): Promise<void> {
    if (this.#pending.size === 0) return;
    this.#inFlight = this.#pending;
    this.#pending = new Map();
    const items = [...this.#inFlight.entries()];
    const failed: PendingItem[] = [];
    let firstError: unknown;
    const now = new Date();
    for (let i = 0; i < items.length; i += this.#options.writeConcurrency) {
      const batch = items.slice(i, i + this.#options.writeConcurrency);
      await Promise.all(
        batch.map(([key, item]) =>
          this.#store.add(item.keyId, item.day, item.model, item.counters, now).then(
            () => this.#inFlight.delete(key),
            (error: unknown) => {
              firstError ??= error;
              failed.push(item);
            },
          ),
        ),
      );
    }
    this.#inFlight = new Map();
    for (const item of failed) this.#merge(item);
    if (failed.length > 0) this.#options.onWriteError?.(firstError, failed.length);
  }

  #merge(item: PendingItem): void {
    const key = itemKey(item.keyId, item.day, item.model);
    const existing = this.#pending.get(key);
    if (!existing) {
      this.#pending.set(key, { ...item, counters: { ...item.counters } });
      return;
    }
    for (const counter of COUNTERS) {
      const value = item.counters[counter];
      if (value) existing.counters[counter] = (existing.counters[counter] ?? 0) + value;
    }
  }
}

function itemKey(keyId: string, day: string, model: string): string {
  return `${keyId}\u0000${day}\u0000${model}`;
}

function zeroTotals(): UsageTotals {
  return Object.fromEntries(COUNTERS.map((counter) => [counter, 0])) as UsageTotals;
}
