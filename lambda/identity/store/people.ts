import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { identityKeys } from '../identity-table.ts';
import type { PersonOverrides } from '../policy.ts';
import type { Person } from '../principal.ts';
import { personOf, personFields } from './sessions.ts';
import { N, num, S, str, type IdentityTable, type Item } from './table.ts';

/**
 * A person who has signed in (`PERSON` / `<sub>`): who they are as of their last sign-in or
 * refresh, and when they were first and last seen. `overrides` (per-person caps and the like,
 * set from the CLI or the console) belongs to the policy code: kept as stored, never rewritten
 * by a sign-in.
 */
export interface PersonRecord extends Person {
  /** Epoch ms. */
  firstSeenAt: number;
  lastSeenAt: number;
  overrides?: Record<string, unknown>;
  /** Who last changed the overrides, and when (epoch ms). */
  updatedBy?: string;
  updatedAt?: number;
}

export class PeopleStore {
  readonly #table: IdentityTable;

  constructor(table: IdentityTable) {
    this.#table = table;
  }

  /** Records a sign-in or refresh: the IdP's current description of the person. */
  async seen(person: Person, nowMs: number): Promise<void> {
    const fields = personFields(person);
    const set = ['#groups = :groups', 'lastSeenAt = :now', 'firstSeenAt = if_not_exists(firstSeenAt, :now)'];
    const remove: string[] = [];
    const values: Item = { ':groups': fields.groups as AttributeValue, ':now': N(nowMs) };
    for (const name of ['email', 'displayName'] as const) {
      const value = fields[name];
      if (value === undefined) remove.push(name);
      else {
        set.push(`${name} = :${name}`);
        values[`:${name}`] = value;
      }
    }
    await this.#table.update(identityKeys.people(), person.sub, {
      expression: `SET ${set.join(', ')}${remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : ''}`,
      names: { '#groups': 'groups' },
      values,
    });
  }

  async get(sub: string): Promise<PersonRecord | undefined> {
    const item = await this.#table.get(identityKeys.people(), sub);
    return item && recordOf(sub, item);
  }

  /**
   * Replaces the person's cap overrides (dollars per period; `null`: no cap; absent: none of
   * their own, their groups' or the default applies). Undefined when nobody with that `sub` has
   * signed in. Returns the overrides before and after.
   */
  async setCapOverrides(sub: string, caps: NonNullable<PersonOverrides['caps']>, updatedBy: string, nowMs: number): Promise<{ before: PersonOverrides['caps']; after: PersonOverrides['caps'] } | undefined> {
    const current = await this.get(sub);
    if (!current) return undefined;
    const overrides = { ...current.overrides, caps };
    const updated = await this.#table.update(identityKeys.people(), sub, {
      expression: 'SET overrides = :overrides, updatedBy = :by, updatedAt = :now',
      condition: 'attribute_exists(pk)',
      values: { ':overrides': attribute(overrides), ':by': S(updatedBy), ':now': N(nowMs) },
    });
    if (!updated) return undefined;
    return { before: (current.overrides?.caps ?? {}) as PersonOverrides['caps'], after: caps };
  }

  /** Everyone who has signed in (one partition, paged): for operators (CLI, console), not the request path. */
  async list(): Promise<PersonRecord[]> {
    const items = await this.#table.partition(identityKeys.people());
    return items.map((item) => recordOf(str(item, 'sk') ?? '', item));
  }

  /** A person by `sub`, else by email (case-insensitive): what operators type. */
  async find(subOrEmail: string): Promise<PersonRecord | undefined> {
    const bySub = await this.get(subOrEmail);
    if (bySub) return bySub;
    const email = subOrEmail.toLowerCase();
    const matches = (await this.list()).filter((person) => person.email?.toLowerCase() === email);
    if (matches.length > 1) throw new Error(`${matches.length} people have the email ${subOrEmail}; name one by its sub: ${matches.map((person) => person.sub).join(', ')}`);
    return matches[0];
  }
}

function recordOf(sub: string, item: Item): PersonRecord {
  const record: PersonRecord = { ...personOf({ ...item, sub: S(sub) }), firstSeenAt: num(item, 'firstSeenAt') ?? 0, lastSeenAt: num(item, 'lastSeenAt') ?? 0 };
  if (item.overrides?.M !== undefined) record.overrides = plain(item.overrides) as Record<string, unknown>;
  const updatedBy = str(item, 'updatedBy');
  if (updatedBy !== undefined) record.updatedBy = updatedBy;
  const updatedAt = num(item, 'updatedAt');
  if (updatedAt !== undefined) record.updatedAt = updatedAt;
  return record;
}

/** Plain JSON (what overrides hold) as a stored attribute. */
function attribute(value: unknown): AttributeValue {
  if (value === null || value === undefined) return { NULL: true };
  if (typeof value === 'string') return S(value);
  if (typeof value === 'number') return N(value);
  if (typeof value === 'boolean') return { BOOL: value };
  if (Array.isArray(value)) return { L: value.map(attribute) };
  return { M: Object.fromEntries(Object.entries(value as Record<string, unknown>).filter(([, entry]) => entry !== undefined).map(([name, entry]) => [name, attribute(entry)])) };
}

/** A stored map as plain JSON (numbers, strings, booleans, lists, maps). */
function plain(value: AttributeValue): unknown {
  if (value.S !== undefined) return value.S;
  if (value.N !== undefined) return Number(value.N);
  if (value.BOOL !== undefined) return value.BOOL;
  if (value.L !== undefined) return value.L.map(plain);
  if (value.M !== undefined) return Object.fromEntries(Object.entries(value.M).map(([name, entry]) => [name, plain(entry)]));
  return null;
}
