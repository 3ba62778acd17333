import type { Usage } from '../observability/usage.ts';

/**
 * The usage table's schema, shared by the CDK stack, the local embedded store, the gateway and
 * the key CLI. Items are keyed by an account id and a period string. An account is a key's public
 * id (so a rotated key keeps its history) or a person, `person#<sub>` (personAccount), whose day
 * items add up what they spent with any key or sign-in session, for their caps:
 * - `DAY#2026-11-21#<model>`: requests and token counters of one account, client model and UTC day;
 * - `MIN#<epoch minute>`: requests in one minute, for requests-per-minute limits (expire via TTL);
 * - `INFLIGHT`: the key's requests in progress, one lease each (`<expiry epoch s>#<request id>`
 *   in the string set `leases`), for the cap on requests in flight.
 */
export const USAGE_TABLE = {
  partitionKey: 'keyId',
  sortKey: 'period',
  ttlAttribute: 'expiresAt',
} as const;

/**
 * The counters of a day item, each added to atomically. `costMicroUsd` is the spend in
 * micro-dollars (1e-6 USD, an integer, so additions stay exact; see lambda/usage/cost.ts).
 */
export const COUNTERS = ['requests', 'inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'costMicroUsd'] as const;
export type Counter = (typeof COUNTERS)[number];

/** What one metered request adds to its day item: every counter, zeros included. */
export function counterValues(usage: Usage | undefined, costMicroUsd = 0): Record<Counter, number> {
  return {
    requests: 1,
    inputTokens: usage?.inputTokens ?? 0,
    outputTokens: usage?.outputTokens ?? 0,
    cacheReadTokens: usage?.cacheReadTokens ?? 0,
    cacheWriteTokens: usage?.cacheWriteTokens ?? 0,
    costMicroUsd,
  };
}

/** One UTC day: `2026-11-21`. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

const PERSON_ACCOUNT = 'person#';

/** The usage account of a person (their IdP `sub`): beside the key accounts, never mistaken for one (key ids start with `key_`). */
export function personAccount(sub: string): string {
  return `${PERSON_ACCOUNT}${sub}`;
}

export function isPersonAccount(accountId: string): boolean {
  return accountId.startsWith(PERSON_ACCOUNT);
}

export function dayPeriod(day: string, model: string): string {
  return `DAY#${day}#${model}`;
}

/** The item holding a key's leases (usage-store.ts acquireLease). */
export const LEASE_PERIOD = 'INFLIGHT';

export function minutePeriod(at: Date): string {
  return `MIN#${Math.floor(at.getTime() / 60_000)}`;
}

/** Parses a day item's period back into its day and model. */
export function parseDayPeriod(period: string): { day: string; model: string } | undefined {
  const match = /^DAY#(\d{4}-\d{2}-\d{2})#(.*)$/.exec(period);
  return match ? { day: match[1] as string, model: match[2] as string } : undefined;
}
