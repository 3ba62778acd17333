import { addCounters } from './rollup-fold.ts';

/**
 * Counters added up per item in memory until a flush writes them (npm start's usage writes). An
 * item taken by a flush stays visible (in flight) until its write succeeds; one whose write
 * failed is added back for the next flush, so nothing is lost while the store is away.
 */
export class CounterBuffer<Item extends { counters: Record<string, number> }> {
  #pending = new Map<string, Item>();
  #inFlight = new Map<string, Item>();

  /** What the next flush writes, by item key: folds add into it directly. */
  get pending(): Map<string, Item> {
    return this.#pending;
  }

  /** Items not yet written: pending and in flight. */
  get size(): number {
    return this.#pending.size + this.#inFlight.size;
  }

  /** Adds an item's counters to the pending item under `key` (a copy is kept). */
  add(key: string, item: Item): void {
    const existing = this.#pending.get(key);
    if (existing) addCounters(existing.counters, item.counters);
    else this.#pending.set(key, { ...item, counters: { ...item.counters } });
  }

  /** Every item not yet written (a pending and an in-flight one may share a key). */
  unwritten(): Item[] {
    return [...this.#pending.values(), ...this.#inFlight.values()];
  }

  /**
   * Writes everything pending, `concurrency` writes at a time. Failed items are added back to
   * the pending ones; the count and the first error are returned.
   */
  async drain(write: (item: Item) => Promise<void>, concurrency: number): Promise<{ failed: number; error: unknown }> {
    if (this.#pending.size === 0) return { failed: 0, error: undefined };
    this.#inFlight = this.#pending;
    this.#pending = new Map();
    const entries = [...this.#inFlight.entries()];
    const failed: [string, Item][] = [];
    let error: unknown;
    for (let i = 0; i < entries.length; i += concurrency) {
      await Promise.all(
        entries.slice(i, i + concurrency).map(([key, item]) =>
          write(item).then(
            () => this.#inFlight.delete(key),
            (cause: unknown) => {
              error ??= cause;
              failed.push([key, item]);
            },
          ),
        ),
      );
    }
    this.#inFlight = new Map();
    for (const [key, item] of failed) this.add(key, item);
    return { failed: failed.length, error };
  }
}
