import type { KeyLimits } from '../auth/key-table.ts';
import type { PersonPolicy } from '../identity/principal.ts';
import { bindingCap, budgetCaps, exceeded, type BudgetCap } from './budget-headers.ts';
import { hasBudget, periodEnd, periodsStart, usageInPeriods, type BudgetPeriod } from './limits.ts';
import type { PoolSpend } from './group-pools.ts';
import type { DayUsage } from './usage-store.ts';
import { personAccount } from './usage-table.ts';

/**
 * Where a caller stands against every spend limit that applies to them: the key's budgets, the
 * person's caps (a key tied to a person has both) and the group budgets the person shares. Read
 * once per request before it goes upstream (middleware/enforce-limits.ts) and by
 * `GET /first/api/oauth/usage`, so the headers, the refusal and the usage page agree.
 */
export interface SpendSubject {
  key?: { id: string; limits?: KeyLimits };
  person?: { sub: string };
  policy?: Pick<PersonPolicy, 'caps' | 'pools'>;
}

export interface SpendReaders {
  /** Day items of an account (a key id, `person#<sub>`) from a day on. */
  days(accountId: string, fromDay: string): Promise<DayUsage[]>;
  /** What groups have spent (absent: group pools cannot be checked). */
  pools?: (groups: readonly string[], at: Date) => Promise<ReadonlyMap<string, PoolSpend>>;
}

export interface SpendStanding {
  /** The key's budgets and the person's caps, with their use so far. */
  caps: BudgetCap[];
  /** The person's group pools (monthly), with the groups' spend so far. */
  pools: BudgetCap[];
}

/** True when anything about the subject's spend has to be read. */
export function hasSpendLimits(subject: SpendSubject): boolean {
  return hasBudget(subject.key?.limits) || personCaps(subject).length > 0 || (subject.policy?.pools.length ?? 0) > 0;
}

function personCaps(subject: SpendSubject): { period: BudgetPeriod; limit: number; source: NonNullable<BudgetCap['source']> }[] {
  const caps = subject.policy?.caps ?? {};
  return (Object.keys(caps) as BudgetPeriod[]).flatMap((period) => {
    const cap = caps[period];
    return cap && cap.limitMicroUsd !== null ? [{ period, limit: cap.limitMicroUsd, source: cap.source }] : [];
  });
}

/**
 * Reads the subject's counters (the key's and the person's day items since the earliest period
 * start, at once; the pools' spend) and states each limit. Throws when a counter cannot be read:
 * the callers fail closed.
 */
export async function readSpendStanding(subject: SpendSubject, readers: SpendReaders, at: Date): Promise<SpendStanding> {
  const from = periodsStart(at);
  const ownCaps = personCaps(subject);
  const person = subject.person;
  const pools = person ? (subject.policy?.pools ?? []) : [];
  if (pools.length > 0 && !readers.pools) throw new Error('group pools are configured, but the group spend (the stats table) cannot be read here');
  const [keyDays, personDays, poolSpend] = await Promise.all([
    subject.key && hasBudget(subject.key.limits) ? readers.days(subject.key.id, from) : [],
    person && ownCaps.length > 0 ? readers.days(personAccount(person.sub), from) : undefined,
    pools.length > 0 ? (readers.pools as NonNullable<SpendReaders['pools']>)(pools.map((pool) => pool.group), at) : undefined,
  ]);
  const caps: BudgetCap[] = budgetCaps(subject.key?.limits, keyDays, at).map((cap) => ({ ...cap, scope: 'key' }));
  const standing: SpendStanding = { caps, pools: [] };
  if (personDays) {
    const use = usageInPeriods(personDays, at);
    for (const cap of ownCaps) caps.push({ kind: 'usd', scope: 'person', source: cap.source, period: cap.period, limit: cap.limit, used: use[cap.period].costMicroUsd, resetsAt: periodEnd(cap.period, at) });
  }
  for (const pool of pools) {
    const spent = poolSpend?.get(pool.group)?.month ?? 0;
    standing.pools.push({ kind: 'usd', scope: 'group_pool', group: pool.group, period: 'month', limit: pool.limitMicroUsd, used: spent, resetsAt: periodEnd('month', at) });
  }
  return standing;
}

/**
 * What stops the request, if anything: a spent cap of the key or the person (of several, the one
 * resetting last), else a spent pool of the person's groups. A group's pool is a budget all its
 * members draw on, and the rollups count each request in every group of its person: a spent pool
 * stops every member, whatever their other groups.
 */
export function blockingCap(standing: SpendStanding): BudgetCap | undefined {
  const own = bindingCap(standing.caps);
  if (own && exceeded(own)) return own;
  return bindingCap(standing.pools.filter(exceeded));
}
