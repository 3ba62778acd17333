/**
 * The key table's schema, shared by the CDK stack, the local embedded store and the key CLI so
 * that all three agree on names. One item per key; the partition key is the key's SHA-256.
 */
export const KEY_TABLE = {
  partitionKey: 'keyHash',
  /** Global secondary index for finding a key by its public id (list, revoke). */
  idIndex: 'byId',
  idAttribute: 'id',
  /** The one attribute the gateway writes (key-store.ts touch); the stack lets it write no other. */
  lastUsedAttribute: 'lastUsedAt',
} as const;

/** Per-key limits, enforced before a request goes upstream. */
export interface KeyLimits {
  requestsPerMinute?: number;
  /** Tokens (input, output, cache reads and writes) per UTC day. */
  tokensPerDay?: number;
  /** Tokens per UTC calendar month. */
  tokensPerMonth?: number;
  /** Ceiling for `max_tokens` / `max_output_tokens`: larger requests are clamped to it. */
  maxOutputTokens?: number;
  /**
   * Spend per UTC day in micro-dollars (1e-6 USD): integers, so a budget of a fraction of a
   * cent is exact and compares exactly with the usage table's `costMicroUsd` counters.
   */
  microUsdPerDay?: number;
  /** Spend per UTC calendar month in micro-dollars. */
  microUsdPerMonth?: number;
  /**
   * Model requests in progress at once, across every instance. Unset: the gateway's default
   * (GATEWAY_MAX_IN_FLIGHT_PER_KEY) for keys with a token or dollar budget, no cap otherwise.
   */
  maxInFlight?: number;
}

export const LIMIT_NAMES = ['requestsPerMinute', 'tokensPerDay', 'tokensPerMonth', 'maxOutputTokens', 'microUsdPerDay', 'microUsdPerMonth', 'maxInFlight'] as const satisfies readonly (keyof KeyLimits)[];

/** What the gateway knows about an issued key; never the key itself. */
export interface KeyRecord {
  keyHash: string;
  id: string;
  name: string;
  createdAt: string;
  /** Epoch seconds; absent = never expires. */
  expiresAt?: number;
  revoked: boolean;
  /** Model globs this key may use; absent = any model. */
  models?: string[];
  lastUsedAt?: string;
  limits?: KeyLimits;
  /** The person (IdP `sub`) the key belongs to: its use counts against their caps and policy. */
  owner?: string;
  /** Admin API automation: a key with a role may call /admin/api (viewer: read only). */
  role?: 'admin' | 'viewer';
  /**
   * Attributes of the stored item that have the wrong type or are unknown, each named with what
   * was expected (key-item.ts). A key with any is refused, whatever else it says.
   */
  malformed?: string[];
}
