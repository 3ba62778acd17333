import type { KeyRecord } from './key-table.ts';

/**
 * Warm-instance cache of key lookups, so a key costs one table read per instance per TTL.
 * Only hits are cached: a key created a moment ago must work at once. Revocation and expiry
 * changes therefore take effect within the TTL (documented as GATEWAY_KEY_CACHE_SECONDS).
 * In-flight lookups are shared so a burst of requests with a cold key makes one read.
 * The sign-in room caches its sessions and people the same way (a record type of its own).
 */
export class KeyCache<T = KeyRecord> {
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #entries = new Map<string, { record: T; expires: number }>();
  readonly #inFlight = new Map<string, Promise<T | undefined>>();
  /** Bumped by deleteWhere: a lookup that started before is not remembered (it may have read the old state). */
  #generation = 0;

  constructor(ttlSeconds: number, maxEntries = 10_000) {
    this.#ttlMs = ttlSeconds * 1000;
    this.#maxEntries = maxEntries;
  }

  async get(keyHash: string, load: (keyHash: string) => Promise<T | undefined>): Promise<T | undefined> {
    const now = Date.now();
    const hit = this.#entries.get(keyHash);
    if (hit && hit.expires > now) return hit.record;
    const pending = this.#inFlight.get(keyHash);
    if (pending) return pending;
    const generation = this.#generation;
    const lookup = load(keyHash)
      .then((record) => {
        if (record && this.#ttlMs > 0 && generation === this.#generation) this.#remember(keyHash, record, Date.now() + this.#ttlMs);
        else this.#entries.delete(keyHash);
        return record;
      })
      .finally(() => {
        if (this.#inFlight.get(keyHash) === lookup) this.#inFlight.delete(keyHash);
      });
    this.#inFlight.set(keyHash, lookup);
    return lookup;
  }

  /** Forgets the entries a change made on this instance has made stale (a revocation): they take effect here at once. */
  deleteWhere(stale: (record: T) => boolean): void {
    this.#generation++;
    this.#inFlight.clear();
    for (const [keyHash, entry] of this.#entries) if (stale(entry.record)) this.#entries.delete(keyHash);
  }

  #remember(keyHash: string, record: T, expires: number): void {
    if (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(keyHash, { record, expires });
  }
}
