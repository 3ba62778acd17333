import type { IdentityConfig } from '../config/identity-schema.ts';
import { periodEnd, periodsStart, usageInPeriods, type BudgetPeriod } from '../usage/limits.ts';
import type { DayUsage } from '../usage/usage-store.ts';
import { personAccount } from '../usage/usage-table.ts';
import { CAP_PERIODS, parseOverrides, resolvePolicy, settingsChecksum } from './policy.ts';
import type { CapSource } from './principal.ts';
import type { PersonRecord } from './store/people.ts';

/**
 * What operators see of a person's policy (the key CLI's `people show`, the console): groups,
 * effective models, each period's cap with where it comes from and what is spent against it,
 * the pools they draw on, their managed settings' checksum. Pure: the caller reads the person
 * (PeopleStore) and their day items (the usage table, account `person#<sub>`, from
 * `periodsStart(now)`).
 */
export interface PersonSummary {
  sub: string;
  email?: string;
  groups: string[];
  /** Model globs the person may use; undefined: whatever the gateway routes. */
  models?: string[];
  /** The `identity.policies` entries that applied (positions, the base first). */
  policyEntries: number[];
  /** The checksum Claude Code will hold for their managed settings; undefined: none (404). */
  managedSettingsChecksum?: string;
  caps: {
    period: BudgetPeriod;
    /** Dollars; null: no cap. */
    limitUsd: number | null;
    /** Where the cap comes from; `none` when nothing sets one. */
    source: CapSource | { from: 'none' };
    spentUsd: number;
    resetsAt: string;
  }[];
  pools: { group: string; monthlyUsd: number }[];
  /** Who last set their own caps, and when. */
  overridesBy?: { by: string; at?: string };
}

export function summarizePerson(config: IdentityConfig, person: PersonRecord, days: readonly DayUsage[], now: Date): PersonSummary {
  const policy = resolvePolicy(config, person, parseOverrides(person.overrides));
  const use = usageInPeriods(days, now);
  const summary: PersonSummary = {
    sub: person.sub,
    ...(person.email ? { email: person.email } : {}),
    groups: person.groups,
    ...(policy.models ? { models: policy.models } : {}),
    policyEntries: policy.policyEntries,
    ...(policy.managedSettings ? { managedSettingsChecksum: settingsChecksum(policy.managedSettings) } : {}),
    caps: CAP_PERIODS.map(([period]) => {
      const cap = policy.caps[period];
      return {
        period,
        limitUsd: cap?.limitMicroUsd === undefined || cap.limitMicroUsd === null ? null : cap.limitMicroUsd / 1e6,
        source: cap?.source ?? { from: 'none' },
        spentUsd: use[period].costMicroUsd / 1e6,
        resetsAt: new Date(periodEnd(period, now)).toISOString(),
      };
    }),
    pools: policy.pools.map((pool) => ({ group: pool.group, monthlyUsd: pool.limitMicroUsd / 1e6 })),
  };
  if (person.updatedBy !== undefined) summary.overridesBy = { by: person.updatedBy, ...(person.updatedAt !== undefined ? { at: new Date(person.updatedAt).toISOString() } : {}) };
  return summary;
}

/**
 * The summary as `people show --json` and the admin API's `GET /people/{sub}` both answer it:
 * the person's day items read from `periodsStart(now)` (one Query), `spendKnown: false` when
 * there is no usage table to read.
 */
export async function readPersonSummary(config: IdentityConfig, person: PersonRecord, usage: { days(account: string, fromDay: string): Promise<DayUsage[]> } | undefined, now: Date): Promise<PersonSummary & { spendKnown: boolean }> {
  const days = usage ? await usage.days(personAccount(person.sub), periodsStart(now)) : [];
  return { ...summarizePerson(config, person, days, now), spendKnown: usage !== undefined };
}
