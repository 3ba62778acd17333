import type { Target, Upstream } from '../config/routing.ts';
import { unitHash } from './target-order.ts';

export interface HealthOptions {
  /** Consecutive failures after which a target is skipped for `cooldownMs`. */
  failuresToCool: number;
  cooldownMs: number;
  /** How long a key rests after a 429 without `retry-after`. */
  rateLimitRestMs: number;
  /** How long a key rests after a 401 or 403 (revoked, out of credit, wrong account). */
  rejectedRestMs: number;
  now?: () => number;
}

export const DEFAULT_HEALTH: HealthOptions = { failuresToCool: 3, cooldownMs: 30_000, rateLimitRestMs: 30_000, rejectedRestMs: 10 * 60_000 };

/** Entries kept at most (target names can come from client model names on glob routes). */
const MAX_ENTRIES = 1_000;

/**
 * What one instance has learned about its upstreams: targets that keep failing (skipped for a
 * while, then tried again) and API keys that were refused (rested). Per instance and in memory on
 * purpose: each Lambda instance learns on its own within a few requests, and nothing has to be
 * shared or stored.
 */
export class UpstreamHealth {
  readonly #options: Required<HealthOptions>;
  readonly #targets = new Map<string, { failures: number; coolUntil: number }>();
  readonly #restingKeys = new Map<string, number>();

  constructor(options: Partial<HealthOptions> = {}) {
    this.#options = { now: Date.now, ...DEFAULT_HEALTH, ...options };
  }

  coolingDown(target: Target): boolean {
    const entry = this.#targets.get(targetId(target));
    return entry !== undefined && entry.coolUntil > this.#options.now();
  }

  targetSucceeded(target: Target): void {
    this.#targets.delete(targetId(target));
  }

  targetFailed(target: Target): void {
    const id = targetId(target);
    const entry = this.#targets.get(id) ?? { failures: 0, coolUntil: 0 };
    entry.failures++;
    // After a cooldown one more failure is enough to cool again (the target is on probation).
    if (entry.failures >= this.#options.failuresToCool) entry.coolUntil = this.#options.now() + this.#options.cooldownMs;
    remember(this.#targets, id, entry);
  }

  /**
   * The key (by position) this request uses: the same one for the same conversation while it is
   * not resting (rendezvous hashing, as for targets), else the best-ranked key that is not, else
   * the one whose rest ends first.
   */
  pickKey(upstream: Upstream, keyCount: number, stickyKey: string): number {
    if (keyCount <= 1) return 0;
    const now = this.#options.now();
    const ranked = Array.from({ length: keyCount }, (_, index) => index).sort((a, b) => unitHash(`${stickyKey}\u0000${b}`) - unitHash(`${stickyKey}\u0000${a}`));
    const restEnd = (index: number) => this.#restingKeys.get(keyId(upstream, index)) ?? 0;
    return ranked.find((index) => restEnd(index) <= now) ?? ranked.reduce((best, index) => (restEnd(index) < restEnd(best) ? index : best));
  }

  /** How many of the upstream's keys are not resting now. */
  availableKeys(upstream: Upstream, keyCount: number): number {
    const now = this.#options.now();
    let available = 0;
    for (let index = 0; index < keyCount; index++) if ((this.#restingKeys.get(keyId(upstream, index)) ?? 0) <= now) available++;
    return available;
  }

  /**
   * What this instance knows now, for the console: targets with failures (cooling down until,
   * when they are), and keys resting until when. Per instance: other instances learn on their own.
   */
  snapshot(): { targets: { upstream: string; model: string; failures: number; coolingDownUntil?: number }[]; restingKeys: { upstream: string; index: number; until: number }[] } {
    const now = this.#options.now();
    const targets = [...this.#targets].map(([id, entry]) => {
      const [upstream = '', model = ''] = id.split('\u0000');
      return { upstream, model, failures: entry.failures, ...(entry.coolUntil > now ? { coolingDownUntil: entry.coolUntil } : {}) };
    });
    const restingKeys = [...this.#restingKeys].flatMap(([id, until]) => {
      const [upstream = '', index = '0'] = id.split('\u0000');
      return until > now ? [{ upstream, index: Number(index), until }] : [];
    });
    return { targets, restingKeys };
  }

  /** Rests a key: after a 429 for its `retry-after` (or the default), after a 401/403 longer. */
  restKey(upstream: Upstream, index: number, status: number, retryAfterMs: number | undefined): number {
    const ms = status === 429 ? (retryAfterMs ?? this.#options.rateLimitRestMs) : this.#options.rejectedRestMs;
    remember(this.#restingKeys, keyId(upstream, index), this.#options.now() + ms);
    return ms;
  }
}

function targetId(target: Target): string {
  return `${target.upstream.name}\u0000${target.upstreamModel}`;
}

function keyId(upstream: Upstream, index: number): string {
  return `${upstream.name}\u0000${index}`;
}

function remember<V>(map: Map<string, V>, id: string, value: V): void {
  map.delete(id);
  if (map.size >= MAX_ENTRIES) map.delete(map.keys().next().value as string);
  map.set(id, value);
}
