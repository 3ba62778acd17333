import type { KeyRecord } from '../auth/key-table.ts';
import type { BudgetPeriod } from '../usage/limits.ts';

/** A person the company's identity provider vouched for (at sign-in, and again at each refresh). */
export interface Person {
  /** The IdP's stable subject identifier (the ID token's `sub`). */
  sub: string;
  email?: string;
  name?: string;
  /** The IdP groups at the last sign-in or refresh (from the configured groups claim). */
  groups: string[];
}

/**
 * Who a request acts for, as authenticate resolved it. Either an issued key (which may be tied to
 * a person: `key.owner`) or a signed-in session; the middlewares read only this, never the
 * identity room's storage.
 */
export interface Principal {
  kind: 'key' | 'session';
  /** The issued key (kind 'key'). */
  key?: KeyRecord;
  /** The person: a signed-in session's, or the owner of a key tied to an identity. */
  person?: Person;
  /** The session family (kind 'session'): what /logout and "revoke sessions" end. */
  sessionId?: string;
}

/** Where a person's cap for one period comes from (docs/sign-in.md, "Spend caps"). */
export type CapSource = { from: 'person' } | { from: 'group'; group: string } | { from: 'default' };

/** A person's cap for one period: micro-dollars, or null for "no cap" said by an override or a group. */
export interface EffectiveCap {
  limitMicroUsd: number | null;
  source: CapSource;
}

/** A budget the members of a group share, per calendar month. */
export interface PoolCap {
  group: string;
  limitMicroUsd: number;
}

/**
 * What a person may do, from the config's `identity.policies` and `caps` and the person's own
 * overrides (lambda/identity/policy.ts resolves it). The request path reads it from its state.
 */
export interface PersonPolicy {
  /** Model globs the person may use on every route; undefined: whatever the gateway routes. */
  models?: string[];
  /** Claude Code's managed settings for the person; undefined: none (404). */
  managedSettings?: Record<string, unknown>;
  /** The policy entries that applied, by their position in `identity.policies` (the base first). */
  policyEntries: number[];
  /** Per period (`day`, `week`, `month`), the cap that applies, when any does. */
  caps: Partial<Record<BudgetPeriod, EffectiveCap>>;
  /** The group budgets the person's spend also counts against. */
  pools: PoolCap[];
  /** What to do next, said in a refusal (the config's `caps.blockedMessage`). */
  blockedMessage?: string;
}
