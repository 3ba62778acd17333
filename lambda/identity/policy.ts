import { createHash } from 'node:crypto';
import type { Caps, GroupCaps, IdentityConfig } from '../config/identity-schema.ts';
import type { BudgetPeriod } from '../usage/limits.ts';
import type { CapSource, EffectiveCap, Person, PersonPolicy } from './principal.ts';

/**
 * A person's policy, from the config and their own overrides: pure, so the request path, the
 * identity endpoints, the key CLI and the console all resolve it the same way
 * (docs/sign-in.md, "Policy per person and group").
 */

/** The periods of caps, with the names the config and overrides use for them. */
export const CAP_PERIODS: readonly [BudgetPeriod, keyof Caps][] = [
  ['day', 'daily'],
  ['week', 'weekly'],
  ['month', 'monthly'],
];

/** What an operator set for one person (stored with the person, `PERSON` / `<sub>`): dollars, `null` for "no cap". */
export interface PersonOverrides {
  caps?: Partial<Record<keyof Caps, number | null>>;
}

/**
 * The stored overrides, checked: a value of the wrong shape throws (the request path then fails
 * closed: a cap an operator set must never silently stop applying).
 */
export function parseOverrides(stored: Record<string, unknown> | undefined): PersonOverrides | undefined {
  if (stored === undefined) return undefined;
  const caps = stored.caps;
  if (caps === undefined) return {};
  if (typeof caps !== 'object' || caps === null || Array.isArray(caps)) throw new Error('the person\'s stored cap overrides are not a map');
  const parsed: NonNullable<PersonOverrides['caps']> = {};
  for (const [, name] of CAP_PERIODS) {
    const value = (caps as Record<string, unknown>)[name];
    if (value === undefined) continue;
    if (value !== null && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) throw new Error(`the person's stored ${name} cap override is not a number of dollars or null`);
    parsed[name] = value;
  }
  return { caps: parsed };
}

const MICRO = 1_000_000;
const micro = (usd: number | null): number | null => (usd === null ? null : Math.round(usd * MICRO));

/**
 * The person's cap for each period, by precedence (the Claude apps gateway's): their own
 * override, else their groups' caps (the smallest, or the largest with groupMode "max"; a group's
 * `null` means no cap, which loses to a real cap under "min" and wins under "max"), else the
 * organization's default, else none.
 */
export function effectiveCaps(config: IdentityConfig, groups: readonly string[], overrides: PersonOverrides | undefined): PersonPolicy['caps'] {
  const caps: PersonPolicy['caps'] = {};
  const settings = config.caps;
  const mode = settings?.groupMode ?? 'min';
  for (const [period, name] of CAP_PERIODS) {
    const own = overrides?.caps?.[name];
    if (own !== undefined) {
      caps[period] = { limitMicroUsd: micro(own), source: { from: 'person' } };
      continue;
    }
    const fromGroups = groupCap(settings?.groups ?? {}, groups, name, mode);
    if (fromGroups) {
      caps[period] = fromGroups;
      continue;
    }
    const fallback = settings?.default?.[name];
    if (fallback !== undefined) caps[period] = { limitMicroUsd: micro(fallback), source: { from: 'default' } };
  }
  return caps;
}

function groupCap(byGroup: Record<string, GroupCaps>, groups: readonly string[], name: keyof Caps, mode: 'min' | 'max'): EffectiveCap | undefined {
  let best: { usd: number | null; group: string } | undefined;
  // Groups in a stable order, so that of equal caps the same group is named every time.
  for (const group of [...new Set(groups)].sort()) {
    const usd = Object.hasOwn(byGroup, group) ? byGroup[group]?.[name] : undefined;
    if (usd === undefined) continue;
    if (best === undefined || better(usd, best.usd, mode)) best = { usd, group };
  }
  return best && { limitMicroUsd: micro(best.usd), source: { from: 'group', group: best.group } };
}

/** Under "min" a real cap beats no cap and the smaller wins; under "max" no cap wins, then the larger. */
function better(candidate: number | null, current: number | null, mode: 'min' | 'max'): boolean {
  if (candidate === current) return false;
  if (mode === 'min') return current === null || (candidate !== null && candidate < current);
  return candidate === null || (current !== null && candidate > current);
}

/**
 * The person's whole policy: the first policy entry whose groups meet theirs, merged onto the
 * base entry (the one without groups): its models replace the base's, its managed settings are
 * merged in (objects recursively; arrays and scalars replace). No entry applies: no model limit
 * beyond the keys' and the routes', and no managed settings.
 */
export function resolvePolicy(config: IdentityConfig, person: Pick<Person, 'groups'>, overrides: PersonOverrides | undefined): PersonPolicy {
  const entries = config.policies;
  const baseIndex = entries.findIndex((entry) => entry.groups === undefined);
  const matchIndex = entries.findIndex((entry) => entry.groups?.some((group) => person.groups.includes(group)));
  const applied = [baseIndex, matchIndex].filter((index) => index >= 0);
  const policy: PersonPolicy = { policyEntries: applied, caps: effectiveCaps(config, person.groups, overrides), pools: [] };
  for (const index of applied) {
    const entry = entries[index];
    if (entry?.models !== undefined) policy.models = entry.models;
    if (entry?.managedSettings !== undefined) policy.managedSettings = policy.managedSettings === undefined ? mergeSettings({}, entry.managedSettings) : mergeSettings(policy.managedSettings, entry.managedSettings);
  }
  const pools = config.caps?.pools ?? {};
  for (const group of [...new Set(person.groups)].sort()) {
    const pool = Object.hasOwn(pools, group) ? pools[group] : undefined;
    if (pool) policy.pools.push({ group, limitMicroUsd: Math.round(pool.monthly * MICRO) });
  }
  if (config.caps?.blockedMessage !== undefined) policy.blockedMessage = config.caps.blockedMessage;
  return policy;
}

/** The caps that limit spend (a number), by period. */
export function numericCaps(policy: Pick<PersonPolicy, 'caps'>): { period: BudgetPeriod; limitMicroUsd: number; source: CapSource }[] {
  return CAP_PERIODS.flatMap(([period]) => {
    const cap = policy.caps[period];
    return cap && cap.limitMicroUsd !== null ? [{ period, limitMicroUsd: cap.limitMicroUsd, source: cap.source }] : [];
  });
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * `over` merged onto `base`: objects recursively, arrays and scalars replaced. New objects are
 * built with Object.fromEntries, so a member named `__proto__` stays a member.
 */
export function mergeSettings(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const merged = new Map<string, unknown>(Object.entries(base));
  for (const [name, value] of Object.entries(over)) {
    const current = merged.get(name);
    merged.set(name, isPlainObject(current) && isPlainObject(value) ? mergeSettings(current, value) : isPlainObject(value) ? mergeSettings({}, value) : value);
  }
  return Object.fromEntries(merged);
}

/**
 * The managed settings' checksum as Claude Code computes it to send `If-None-Match`: `sha256:`
 * and the hex SHA-256 of the settings as JSON, without whitespace, with the keys of every object
 * in sorted order. Built as the client builds it (objects rebuilt with sorted keys, then
 * JSON.stringify), so the two agree byte for byte, even on keys that JavaScript orders itself.
 */
export function settingsChecksum(settings: Record<string, unknown>): string {
  return `sha256:${createHash('sha256').update(JSON.stringify(sortedKeys(settings))).digest('hex')}`;
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (isPlainObject(value)) return Object.fromEntries(Object.keys(value).sort().map((name) => [name, sortedKeys(value[name])]));
  return value;
}

/**
 * A stable id for a set of managed settings (the answer's `uuid`): a UUID (RFC 9562 version 8)
 * made from the checksum, so it changes exactly when the settings do.
 */
export function settingsUuid(checksum: string): string {
  const hex = createHash('sha256').update(`agent-gateway managed settings\n${checksum}`).digest('hex');
  const variant = ((parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
