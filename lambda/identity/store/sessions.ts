import { identityKeys, SINGLE } from '../identity-table.ts';
import type { Person } from '../principal.ts';
import { epochSeconds, L, list, live, N, num, S, str, type IdentityTable, type Item } from './table.ts';

/**
 * A session: one sign-in of one person from one client (a token "family": every access and
 * refresh token minted from that sign-in by rotation). Revoking it ends all of them.
 */
export interface Session {
  id: string;
  person: Person;
  surface: string;
  ip: string;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch s: the session ends then whatever happens (sessionDays, or the one access token's life without an IdP refresh token). */
  expiresAt: number;
  lastRefreshAt?: number;
  /** The IdP refresh token, sealed (AES-256-GCM, identity secret): what each refresh re-checks the IdP with. */
  idpRefresh?: string;
  revokedAt?: number;
  revokedReason?: string;
}

/** What an access token item says: whose it is, as of the sign-in or refresh that minted it. */
export interface AccessGrant {
  family: string;
  person: Person;
  /** Epoch s. */
  expiresAt: number;
}

export interface RefreshGrant {
  family: string;
  /** Epoch ms of its first use (rotation: a refresh token works once). */
  usedAt?: number;
  expiresAt: number;
}

/** The sessions of a person, as listed (`SESSIONS#<sub>`). */
export interface SessionSummary {
  id: string;
  surface: string;
  ip: string;
  createdAt: number;
  expiresAt: number;
  revokedAt?: number;
}

/** Sessions and their tokens (by digest). Revocation and single use are conditional writes. */
export class SessionStore {
  readonly #table: IdentityTable;

  constructor(table: IdentityTable) {
    this.#table = table;
  }

  async create(session: Session): Promise<void> {
    const item: Item = {
      ...personFields(session.person),
      surface: S(session.surface),
      ip: S(session.ip),
      createdAt: N(session.createdAt),
      expiresAt: N(session.expiresAt),
    };
    if (session.idpRefresh !== undefined) item.idpRefresh = S(session.idpRefresh);
    await this.#table.put(identityKeys.family(session.id), SINGLE, item, true);
    await this.#table.put(identityKeys.sessions(session.person.sub), session.id, {
      surface: S(session.surface),
      ip: S(session.ip),
      createdAt: N(session.createdAt),
      expiresAt: N(session.expiresAt),
    });
  }

  /** The session, when it exists and has not ended (revoked sessions are returned: callers decide). */
  async get(id: string, nowMs: number): Promise<Session | undefined> {
    const item = await this.#table.get(identityKeys.family(id));
    if (!live(item, nowMs)) return undefined;
    const session: Session = { id, person: personOf(item), surface: str(item, 'surface') ?? '', ip: str(item, 'ip') ?? '', createdAt: num(item, 'createdAt') ?? 0, expiresAt: num(item, 'expiresAt') ?? 0 };
    const optional = { lastRefreshAt: num(item, 'lastRefreshAt'), idpRefresh: str(item, 'idpRefresh'), revokedAt: num(item, 'revokedAt'), revokedReason: str(item, 'revokedReason') };
    for (const [name, value] of Object.entries(optional)) if (value !== undefined) Object.assign(session, { [name]: value });
    return session;
  }

  async putAccess(hash: string, grant: AccessGrant): Promise<void> {
    await this.#table.put(identityKeys.access(hash), SINGLE, { family: S(grant.family), ...personFields(grant.person), expiresAt: N(grant.expiresAt) }, true);
  }

  async getAccess(hash: string, nowMs: number): Promise<AccessGrant | undefined> {
    const item = await this.#table.get(identityKeys.access(hash));
    return live(item, nowMs) ? { family: str(item, 'family') ?? '', person: personOf(item), expiresAt: num(item, 'expiresAt') ?? 0 } : undefined;
  }

  async putRefresh(hash: string, grant: RefreshGrant): Promise<void> {
    await this.#table.put(identityKeys.refresh(hash), SINGLE, { family: S(grant.family), expiresAt: N(grant.expiresAt) }, true);
  }

  async getRefresh(hash: string, nowMs: number): Promise<RefreshGrant | undefined> {
    const item = await this.#table.get(identityKeys.refresh(hash));
    if (!live(item, nowMs)) return undefined;
    const grant: RefreshGrant = { family: str(item, 'family') ?? '', expiresAt: num(item, 'expiresAt') ?? 0 };
    const usedAt = num(item, 'usedAt');
    if (usedAt !== undefined) grant.usedAt = usedAt;
    return grant;
  }

  /** Marks a refresh token used; false when it already was (by a concurrent refresh or a replay). */
  async claimRefresh(hash: string, nowMs: number): Promise<boolean> {
    const claimed = await this.#table.update(identityKeys.refresh(hash), SINGLE, {
      expression: 'SET usedAt = :now',
      condition: 'attribute_exists(pk) AND attribute_not_exists(usedAt)',
      values: { ':now': N(nowMs) },
    });
    return claimed !== undefined;
  }

  /** Gives back a claim that came to nothing (the IdP could not be asked): the token works again. */
  async releaseRefresh(hash: string, claimedAt: number): Promise<void> {
    await this.#table.update(identityKeys.refresh(hash), SINGLE, { expression: 'REMOVE usedAt', condition: 'usedAt = :at', values: { ':at': N(claimedAt) } });
  }

  /** Records a refresh (the person as the IdP now describes them); false when the session was revoked meanwhile. */
  async refreshed(id: string, person: Person, nowMs: number, idpRefresh?: string): Promise<boolean> {
    const set = ['lastRefreshAt = :now', '#groups = :groups'];
    const remove: string[] = [];
    const values: Item = { ':now': N(nowMs), ':groups': L(person.groups) };
    for (const [name, value] of [['email', person.email], ['displayName', person.name], ['idpRefresh', idpRefresh]] as const) {
      if (value === undefined) {
        if (name !== 'idpRefresh') remove.push(name);
        continue;
      }
      set.push(`${name} = :${name}`);
      values[`:${name}`] = S(value);
    }
    const updated = await this.#table.update(identityKeys.family(id), SINGLE, {
      expression: `SET ${set.join(', ')}${remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : ''}`,
      condition: 'attribute_exists(pk) AND attribute_not_exists(revokedAt)',
      names: { '#groups': 'groups' },
      values,
    });
    return updated !== undefined;
  }

  /** Ends a session at once; the session as it was, or undefined when it was unknown or already revoked. */
  async revoke(id: string, reason: string, nowMs: number): Promise<Session | undefined> {
    const updated = await this.#table.update(identityKeys.family(id), SINGLE, {
      expression: 'SET revokedAt = :now, revokedReason = :reason',
      condition: 'attribute_exists(pk) AND attribute_not_exists(revokedAt)',
      values: { ':now': N(nowMs), ':reason': S(reason) },
    });
    if (updated === undefined) return undefined;
    const person = personOf(updated);
    await this.#table.update(identityKeys.sessions(person.sub), id, { expression: 'SET revokedAt = :now', condition: 'attribute_exists(pk)', values: { ':now': N(nowMs) } });
    return this.get(id, nowMs);
  }

  /** A person's sessions, newest first (ended ones included until their items expire). */
  async list(sub: string): Promise<SessionSummary[]> {
    const items = await this.#table.partition(identityKeys.sessions(sub));
    return items
      .map((item) => {
        const summary: SessionSummary = { id: str(item, 'sk') ?? '', surface: str(item, 'surface') ?? '', ip: str(item, 'ip') ?? '', createdAt: num(item, 'createdAt') ?? 0, expiresAt: num(item, 'expiresAt') ?? 0 };
        const revokedAt = num(item, 'revokedAt');
        if (revokedAt !== undefined) summary.revokedAt = revokedAt;
        return summary;
      })
      .sort((a, b) => b.createdAt - a.createdAt);
  }
}

/** A summary's session still works (not revoked, not ended). */
export function isActive(session: Pick<SessionSummary, 'expiresAt' | 'revokedAt'>, nowMs: number): boolean {
  return session.revokedAt === undefined && session.expiresAt > epochSeconds(nowMs);
}

/** The person attributes as items store them (`name` is a DynamoDB reserved word: `displayName`). */
export function personFields(person: Person): Item {
  const item: Item = { sub: S(person.sub), groups: L(person.groups) };
  if (person.email !== undefined) item.email = S(person.email);
  if (person.name !== undefined) item.displayName = S(person.name);
  return item;
}

export function personOf(item: Item): Person {
  const person: Person = { sub: str(item, 'sub') ?? '', groups: list(item, 'groups') };
  const email = str(item, 'email');
  if (email !== undefined) person.email = email;
  const name = str(item, 'displayName');
  if (name !== undefined) person.name = name;
  return person;
}
