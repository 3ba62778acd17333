import type { KeyRecord } from '../auth/key-table.ts';
import type { DynamoApi } from '../aws/dynamodb.ts';
import { endSession } from './session-tokens.ts';
import { AuditLog } from './store/audit.ts';
import { CAP_PERIODS, parseOverrides, type PersonOverrides } from './policy.ts';
import { PeopleStore, type PersonRecord } from './store/people.ts';
import { isActive, SessionStore, type SessionSummary } from './store/sessions.ts';
import { IdentityTable } from './store/table.ts';

/** Changes to a person's own caps per period: dollars, `null` for no cap, `inherit` to drop theirs (their groups' or the default applies). */
export type CapChanges = Partial<Record<NonNullable<keyof NonNullable<PersonOverrides['caps']>>, number | null | 'inherit'>>;

/** A person as operators see them: who, groups, when seen, their sessions. */
export interface PersonView extends PersonRecord {
  sessions: SessionSummary[];
  activeSessions: number;
}

/**
 * What operators do with people (the key CLI; the console calls the same): list who has signed
 * in, and end a person's access at once. Reads the identity table directly, never through the
 * request path; every change is an audit event naming the operator.
 */
export class IdentityOperations {
  readonly people: PeopleStore;
  readonly sessions: SessionStore;
  readonly audit: AuditLog;

  constructor(tableName: string, dynamo: DynamoApi, log: (line: string) => void = () => {}) {
    const table = new IdentityTable(tableName, dynamo);
    this.people = new PeopleStore(table);
    this.sessions = new SessionStore(table);
    this.audit = new AuditLog(table, log);
  }

  async list(now = Date.now()): Promise<PersonView[]> {
    const people = await this.people.list();
    return Promise.all(people.map((person) => this.#view(person, now)));
  }

  /** A person by sub or email; undefined when nobody by that name has signed in. */
  async find(subOrEmail: string, now = Date.now()): Promise<PersonView | undefined> {
    const person = await this.people.find(subOrEmail);
    return person && this.#view(person, now);
  }

  /**
   * Ends every session of a person at once: their access and refresh tokens stop working (on
   * running gateway instances within their session cache's seconds). Returns the sessions ended.
   */
  async revokeSessions(sub: string, actor: string, via: string, now = Date.now()): Promise<string[]> {
    const context = { sessions: this.sessions, audit: this.audit, now: () => now, forgetSession: () => {} };
    const ended: string[] = [];
    for (const session of await this.sessions.list(sub)) {
      if (isActive(session, now) && (await endSession(context, session.id, 'operator', { actor, via }))) ended.push(session.id);
    }
    return ended;
  }

  /**
   * Sets a person's own caps (dollars per period; `null`: no cap; a period left out: their
   * groups' or the default applies again), merged onto what they had. Audited with the values
   * before and after (and the operator's address, from the console). Running gateway instances
   * apply it within their person cache's seconds.
   */
  async setCaps(sub: string, changes: CapChanges, actor: string, via: string, now = Date.now(), ip?: string): Promise<{ before: NonNullable<PersonOverrides['caps']>; after: NonNullable<PersonOverrides['caps']> } | undefined> {
    const current = await this.people.get(sub);
    if (!current) return undefined;
    const before = parseOverrides(current.overrides)?.caps ?? {};
    const after: NonNullable<PersonOverrides['caps']> = { ...before };
    for (const [, name] of CAP_PERIODS) {
      const change = changes[name];
      if (change === 'inherit') delete after[name];
      else if (change !== undefined) after[name] = change;
    }
    const written = await this.people.setCapOverrides(sub, after, actor, now);
    if (!written) return undefined;
    const describe = (caps: NonNullable<PersonOverrides['caps']>) => CAP_PERIODS.map(([, name]) => `${name}=${caps[name] === undefined ? 'inherit' : caps[name] === null ? 'none' : caps[name]}`).join(' ');
    await this.audit.record({ type: 'person_caps_changed', sub, ...(current.email ? { email: current.email } : {}), actor, via, ...(ip ? { ip } : {}), detail: `${describe(before)} -> ${describe(after)}` }, now);
    return { before, after };
  }

  /**
   * Ends a person's access at once (the key CLI's `people revoke`, the console's revoke): every
   * session (their signed-in clients, console sessions included), and every key tied to them.
   * They can sign in again while the IdP lets them. Undefined when nobody with that `sub` signed in.
   */
  async revokePerson(sub: string, keys: { list(): Promise<KeyRecord[]>; revoke(keyHash: string): Promise<boolean> }, actor: string, via: string, now = Date.now()): Promise<{ sub: string; email?: string; sessionsEnded: string[]; keysRevoked: string[] } | undefined> {
    const person = await this.people.get(sub);
    if (!person) return undefined;
    const sessionsEnded = await this.revokeSessions(sub, actor, via, now);
    const owned = (await keys.list()).filter((record) => record.owner === sub && !record.revoked);
    for (const record of owned) await keys.revoke(record.keyHash);
    const keysRevoked = [...new Set(owned.map((record) => record.id))];
    for (const key of keysRevoked) await this.audit.record({ type: 'key_revoked', key, sub, actor, via, reason: 'owner_revoked' }, now);
    return { sub, ...(person.email ? { email: person.email } : {}), sessionsEnded, keysRevoked };
  }

  async #view(person: PersonRecord, now: number): Promise<PersonView> {
    const sessions = await this.sessions.list(person.sub);
    return { ...person, sessions, activeSessions: sessions.filter((session) => isActive(session, now)).length };
  }
}
