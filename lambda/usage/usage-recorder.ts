import { CounterBuffer } from './counter-buffer.ts';
import type { RollupIncrement } from './rollup-fold.ts';
import { RollupTally } from './rollup-tally.ts';
import type { DynamoStatsStore } from './stats-store.ts';
import type { UsageEvent } from './usage-event.ts';
import type { DayUsage, DynamoUsageStore, UsageTotals } from './usage-store.ts';
import { COUNTERS, counterValues, personAccount, utcDay } from './usage-table.ts';

export interface UsageRecorderOptions {
  /**
   * 0: every request's usage is written before `record` resolves (Lambda: the invocation must not
   * end with work pending). Above 0: usage is added up in memory per account, model and UTC day
   * (and folded into rollup rows) and written every `flushMs` (a long-running server: one write
   * per item per interval, whatever the request rate; a kill -9 loses at most one interval).
   */
  flushMs: number;
  /** Where rollups go (the stats table); absent = accounts only, no rollups. */
  stats?: Pick<DynamoStatsStore, 'putEvent' | 'addRollup'>;
  /** Distinct account/model/day items held before `record` waits for a flush (backpressure). */
  maxPendingItems?: number;
  /** Distinct rollup rows held before `record` waits for a flush. */
  maxPendingRows?: number;
  /** Writes in flight at once during a flush. */
  writeConcurrency?: number;
  /** Told about failed writes (their counters are kept and retried). */
  onWriteError?: (error: unknown, items: number) => void;
}

interface DayItem {
  accountId: string;
  day: string;
  model: string;
  counters: Record<string, number>;
}

/** The usage accounts a request is charged to: its key, and the person it acts for. */
export function accountsOf(event: Pick<UsageEvent, 'keyId' | 'personSub'>): string[] {
  const accounts: string[] = [];
  if (event.keyId !== undefined) accounts.push(event.keyId);
  if (event.personSub !== undefined) accounts.push(personAccount(event.personSub));
  return accounts;
}

/**
 * Usage on its way to the usage and stats tables. Each request is charged to its accounts (the
 * key's and the person's day items: exact and immediate, what budgets and caps read) and counted
 * in the rollups (what the console and group pools read).
 *
 * On Lambda (`flushMs` 0) a request costs one UpdateItem per account and one PutItem of its
 * usage event, which the aggregator folds into rollups (lambda/usage/aggregator.ts). A
 * long-running server adds up in memory instead: the store serializes writes to one item
 * (DynamoDB, and dynalite even more so), so writing every request at a high rate would queue
 * without bound; adding up per item bounds the queue by the number of items. Budget checks see
 * the counters not written yet through `days`, so limits hold on this instance between flushes.
 */
export class UsageRecorder {
  readonly #store: Pick<DynamoUsageStore, 'add' | 'days' | 'admitRequest' | 'acquireLease' | 'releaseLease'>;
  readonly #stats: UsageRecorderOptions['stats'];
  readonly #options: Required<Omit<UsageRecorderOptions, 'onWriteError' | 'stats'>> & Pick<UsageRecorderOptions, 'onWriteError'>;
  readonly #items = new CounterBuffer<DayItem>();
  readonly #rows = new CounterBuffer<RollupIncrement>();
  /** Requests counted in the rollups since the last flush, folded into rows when it writes them. */
  readonly #tally = new RollupTally();
  #flushing: Promise<void> | undefined;
  /** A flush was asked for while one was under way: it goes round once more. */
  #again = false;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(store: Pick<DynamoUsageStore, 'add' | 'days' | 'admitRequest' | 'acquireLease' | 'releaseLease'>, options: UsageRecorderOptions) {
    const { stats, ...rest } = options;
    this.#store = store;
    this.#stats = stats;
    this.#options = { maxPendingItems: 10_000, maxPendingRows: 50_000, writeConcurrency: 16, ...rest };
    if (options.flushMs > 0) {
      this.#timer = setInterval(() => void this.flush(), options.flushMs);
      this.#timer.unref();
    }
  }

  /**
   * Charges one request to its accounts (the key's id, `person#<sub>`), per its client model and
   * the UTC day of `event.at`, and counts it in the rollups.
   */
  async record(event: UsageEvent): Promise<void> {
    const counters = counterValues(event.usage, event.costMicroUsd);
    const day = utcDay(event.at);
    const accounts = accountsOf(event);
    if (this.#options.flushMs === 0) {
      await Promise.all([...accounts.map((account) => this.#store.add(account, day, event.model, counters, event.at)), this.#stats?.putEvent(event)]);
      return;
    }
    while (this.#mustWait(accounts, day, event.model)) await this.flush();
    for (const accountId of accounts) this.#items.add(itemKey(accountId, day, event.model), { accountId, day, model: event.model, counters });
    if (this.#stats) this.#tally.add(event);
  }

  /** Backpressure: the buffers are full and this request would add to them. */
  #mustWait(accounts: string[], day: string, model: string): boolean {
    const items = this.#items.pending;
    if (items.size >= this.#options.maxPendingItems && accounts.some((account) => !items.has(itemKey(account, day, model)))) return true;
    return this.#stats !== undefined && this.#rows.pending.size + this.#tally.rows >= this.#options.maxPendingRows;
  }

  /** Recorded day items of an account (a key id, `person#<sub>`) from `fromDay` on, plus what this instance has not written yet. */
  async days(accountId: string, fromDay: string): Promise<DayUsage[]> {
    const written = await this.#store.days(accountId, fromDay);
    const unwritten = this.#items.unwritten().filter((item) => item.accountId === accountId && item.day >= fromDay);
    if (unwritten.length === 0) return written;
    return [...written, ...unwritten.map((item) => ({ keyId: accountId, day: item.day, model: item.model, ...zeroTotals(), ...item.counters }))];
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

  /** Day items and rollup rows not yet written (for tests and the shutdown message); rows still tallied are counted as many as they may fold into. */
  get pendingItems(): number {
    return this.#items.size + this.#rows.size + this.#tally.rows;
  }

  /**
   * Writes everything added so far; failed items stay pending. Concurrent calls share one flush,
   * which goes round once more when called while under way: what a round writes is what was
   * pending when it began, and a caller waits for what it recorded before calling.
   */
  flush(): Promise<void> {
    if (this.#flushing) {
      this.#again = true;
      return this.#flushing;
    }
    this.#flushing = (async () => {
      try {
        do {
          this.#again = false;
          await this.#writePending();
        } while (this.#again);
      } finally {
        this.#flushing = undefined;
      }
    })();
    return this.#flushing;
  }

  /** Stops the interval and writes until nothing is pending or `timeoutMs` has passed (the store may be down). */
  async close(timeoutMs = 10_000): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    const until = Date.now() + timeoutMs;
    while (this.pendingItems > 0 && Date.now() < until) {
      await this.flush();
      if (this.pendingItems > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** The accounts' items first (budgets and caps read them), then the rollup rows (plain ADDs: this is their only writer). */
  async #writePending(): Promise<void> {
    const now = new Date();
    const concurrency = this.#options.writeConcurrency;
    const items = await this.#items.drain((item) => this.#store.add(item.accountId, item.day, item.model, item.counters, now), concurrency);
    const stats = this.#stats;
    this.#tally.foldInto(this.#rows.pending);
    const rows = stats ? await this.#rows.drain((row) => stats.addRollup(row), concurrency) : { failed: 0, error: undefined };
    const failed = items.failed + rows.failed;
    if (failed > 0) this.#options.onWriteError?.(items.error ?? rows.error, failed);
  }
}

function itemKey(accountId: string, day: string, model: string): string {
  return `${accountId}\u0000${day}\u0000${model}`;
}

function zeroTotals(): UsageTotals {
  return Object.fromEntries(COUNTERS.map((counter) => [counter, 0])) as UsageTotals;
}
