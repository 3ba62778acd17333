import type { KeyRecord } from './key-table.ts';

/**
 * Warm-instance cache of key lookups, so a key costs one table read per instance per TTL.
 * Only hits are cached: a key created a moment ago must work at once. Revocation and expiry
 * changes therefore take effect within the TTL (documented as GATEWAY_KEY_CACHE_SECONDS).
 * In-flight lookups are shared so a burst of requests with a cold key makes one read.
 */
export class KeyCache {
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #entries = new Map<string, { record: KeyRecord; expires: number }>();
  readonly #inFlight = new Map<string, Promise<KeyRecord | undefined>>();

  constructor(ttlSeconds: number, maxEntries = 10_000) {
    this.#ttlMs = ttlSeconds * 1000;
    this.#maxEntries = maxEntries;
  }

  async get(keyHash: string, load: (keyHash: string) => Promise<KeyRecord | undefined>): Promise<KeyRecord | undefined> {
    const now = Date.now();
    const hit = this.#entries.get(keyHash);
    if (hit && hit.expires > now) return hit.record;
    const pending = this.#inFlight.get(keyHash);
    if (pending) return pending;
    const lookup = load(keyHash)
      .then((record) => {
        if (record && this.#ttlMs > 0) this.#remember(keyHash, record, Date.now() + this.#ttlMs);
        else this.#entries.delete(keyHash);
        return record;
      })
      .finally(() => this.#inFlight.delete(keyHash));
    this.#inFlight.set(keyHash, lookup);
    return lookup;
  }

  #remember(keyHash: string, record: KeyRecord, expires: number): void {
    if (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(keyHash, { record, expires });
  }
}
