import { identityKeys, SINGLE } from '../identity-table.ts';
import { RATE_LIMITS, type RateLimitName } from '../limits.ts';
import { epochSeconds, N, type IdentityTable } from './table.ts';

/**
 * Per-IP counters in fixed windows, shared by every instance: one conditional ADD per request
 * (`RATE#<what>#<ip>#<window>`), refused without counting once the window holds `max`.
 */
export class RateLimits {
  readonly #table: IdentityTable;

  constructor(table: IdentityTable) {
    this.#table = table;
  }

  /** Counts one request; false when the IP has used up the window (retry after `retryAfter(...)` seconds). */
  async admit(name: RateLimitName, ip: string, nowMs: number): Promise<boolean> {
    const { max, windowSeconds } = RATE_LIMITS[name];
    const window = Math.floor(epochSeconds(nowMs) / windowSeconds);
    const counted = await this.#table.update(identityKeys.rate(name, ip || 'unknown', window), SINGLE, {
      expression: 'ADD #count :one SET expiresAt = :end',
      condition: 'attribute_not_exists(#count) OR #count < :max',
      names: { '#count': 'count' },
      values: { ':one': N(1), ':max': N(max), ':end': N((window + 1) * windowSeconds) },
    });
    return counted !== undefined;
  }
}

/** Seconds until the current window of a limit ends. */
export function retryAfter(name: RateLimitName, nowMs: number): number {
  const { windowSeconds } = RATE_LIMITS[name];
  return windowSeconds - (epochSeconds(nowMs) % windowSeconds);
}
