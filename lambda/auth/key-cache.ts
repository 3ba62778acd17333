import type { KeyRecord } from './key-table.ts';

/** How long a key the table does not hold is remembered as unknown, at most (shorter when the TTL is). */
export const UNKNOWN_KEY_TTL_MS = 5_000;

/**
 * Warm-instance cache of key lookups, so a key costs one table read per instance per TTL.
 * Revocation and expiry changes take effect within the TTL (documented as
 * GATEWAY_KEY_CACHE_SECONDS). In-flight lookups are shared so a burst of requests with a cold key
 * makes one read. The sign-in room caches its sessions and people the same way (a record type of
 * its own).
 *
 * Keys the table does not hold are remembered too, for a short while (UNKNOWN_KEY_TTL_MS, or the
 * TTL when it is shorter): a client retrying a deleted or mistyped key costs one read per 5 s,
 * not one per attempt. Short, because a key used a moment before it was stored (or before an
 * eventually consistent read sees it) works once that moment has passed. Both maps are bounded
 * and evict the least recently used entry, so no stream of made-up keys can grow them.
 */
export class KeyCache<T = KeyRecord> {
  readonly #ttlMs: number;
  readonly #unknownTtlMs: number;
  readonly #maxEntries: number;
  readonly #entries = new Map<string, { record: T; expires: number }>();
  readonly #unknown = new Map<string, number>();
  readonly #inFlight = new Map<string, Promise<T | undefined>>();
  /** Bumped by deleteWhere: a lookup that started before is not remembered (it may have read the old state). */
  #generation = 0;

  constructor(ttlSeconds: number, maxEntries = 10_000) {
    this.#ttlMs = ttlSeconds * 1000;
    this.#unknownTtlMs = Math.min(this.#ttlMs, UNKNOWN_KEY_TTL_MS);
    this.#maxEntries = maxEntries;
  }

  async get(keyHash: string, load: (keyHash: string) => Promise<T | undefined>): Promise<T | undefined> {
    const now = Date.now();
    const hit = this.#entries.get(keyHash);
    if (hit && hit.expires > now) return touch(this.#entries, keyHash, hit).record;
    const unknownUntil = this.#unknown.get(keyHash);
    if (unknownUntil !== undefined && unknownUntil > now) {
      touch(this.#unknown, keyHash, unknownUntil);
      return undefined;
    }
    const pending = this.#inFlight.get(keyHash);
    if (pending) return pending;
    const generation = this.#generation;
    const lookup = load(keyHash)
      .then((record) => {
        this.#entries.delete(keyHash);
        this.#unknown.delete(keyHash);
        if (generation !== this.#generation) return record;
        if (record && this.#ttlMs > 0) remember(this.#entries, this.#maxEntries, keyHash, { record, expires: Date.now() + this.#ttlMs });
        else if (!record && this.#unknownTtlMs > 0) remember(this.#unknown, this.#maxEntries, keyHash, Date.now() + this.#unknownTtlMs);
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
}

/** Marks an entry the most recently used (a Map keeps insertion order: the first entry is the least recent). */
function touch<V>(map: Map<string, V>, key: string, value: V): V {
  map.delete(key);
  map.set(key, value);
  return value;
}

function remember<V>(map: Map<string, V>, maxEntries: number, key: string, value: V): void {
  if (map.size >= maxEntries) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
  map.set(key, value);
}
