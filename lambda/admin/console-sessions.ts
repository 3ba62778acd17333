import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { hashSecret } from '../auth/key-material.ts';
import { identityKeys, SINGLE } from '../identity/identity-table.ts';
import { epochSeconds, live, N, num, S, str, type IdentityTable, type Item } from '../identity/store/table.ts';

/**
 * Console sessions and one-time sign-in links, in the identity table (docs/console.md,
 * "Sessions"). The browser holds a random cookie (HttpOnly) and the page a CSRF token derived
 * from it (a digest the page can ask for again, but no other site can compute); the table holds
 * their SHA-256 digests only, with a TTL. A link is taken by a delete that returns it, so it
 * works once.
 */

export type ConsoleRole = 'admin' | 'viewer';

/** A console session lasts at most this long (signed in with the IdP or with a link). */
export const CONSOLE_SESSION_SECONDS = 12 * 3600;
/** A one-time sign-in link works this long. */
export const CONSOLE_LINK_SECONDS = 600;

/** Who a console session is for: a person the IdP vouched for, or whoever held a one-time link. */
export interface ConsoleActor {
  /** How they signed in. */
  via: 'oidc' | 'link';
  sub?: string;
  email?: string;
  name?: string;
  /** Shown in the page and written as the actor of audit events. */
  label: string;
}

export interface ConsoleSession {
  id: string;
  role: ConsoleRole;
  actor: ConsoleActor;
  /** The sign-in's session family (IdP sign-ins): revoking the person's sessions ends this one too. */
  family?: string;
  ip: string;
  createdAt: number;
  /** Epoch s. */
  expiresAt: number;
  csrfHash: string;
}

const secret = () => randomBytes(32).toString('base64url');
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export class ConsoleSessions {
  readonly #table: IdentityTable;

  constructor(table: IdentityTable) {
    this.#table = table;
  }

  /** A one-time link's token (shown once, stored as a digest), for `role`. */
  async createLink(role: ConsoleRole, createdBy: string, nowMs: number): Promise<{ token: string; expiresAt: number }> {
    const token = secret();
    const expiresAt = epochSeconds(nowMs) + CONSOLE_LINK_SECONDS;
    await this.#table.put(identityKeys.consoleLink(hashSecret(token)), SINGLE, { role: S(role), createdBy: S(createdBy), createdAt: N(nowMs), expiresAt: N(expiresAt) }, true);
    return { token, expiresAt };
  }

  /** Takes a link (it works once): its role, or undefined when unknown, used or expired. */
  async takeLink(token: string, nowMs: number): Promise<{ role: ConsoleRole; createdBy: string } | undefined> {
    if (!TOKEN.test(token)) return undefined;
    const item = await this.#table.take(identityKeys.consoleLink(hashSecret(token)));
    if (!live(item, nowMs)) return undefined;
    const role = str(item, 'role');
    return role === 'admin' || role === 'viewer' ? { role, createdBy: str(item, 'createdBy') ?? '' } : undefined;
  }

  /** Opens a session: the cookie and the CSRF token to hand to the browser (only their digests are kept). */
  async create(session: Omit<ConsoleSession, 'id' | 'csrfHash' | 'expiresAt' | 'createdAt'>, nowMs: number): Promise<{ cookie: string; csrf: string; session: ConsoleSession }> {
    const cookie = secret();
    const csrf = csrfFor(cookie);
    const full: ConsoleSession = { ...session, id: `con_${randomBytes(12).toString('base64url')}`, createdAt: nowMs, expiresAt: epochSeconds(nowMs) + CONSOLE_SESSION_SECONDS, csrfHash: hashSecret(csrf) };
    const item: Item = {
      id: S(full.id),
      role: S(full.role),
      via: S(full.actor.via),
      label: S(full.actor.label),
      ip: S(full.ip),
      createdAt: N(full.createdAt),
      expiresAt: N(full.expiresAt),
      csrfHash: S(full.csrfHash),
    };
    for (const name of ['sub', 'email', 'name'] as const) if (full.actor[name] !== undefined) item[`actor_${name}`] = S(full.actor[name] as string);
    if (full.family !== undefined) item.family = S(full.family);
    await this.#table.put(identityKeys.consoleSession(hashSecret(cookie)), SINGLE, item, true);
    return { cookie, csrf, session: full };
  }

  /** The session a cookie opens, when it exists and has not expired. */
  async get(cookie: string, nowMs: number): Promise<ConsoleSession | undefined> {
    if (!TOKEN.test(cookie)) return undefined;
    const item = await this.#table.get(identityKeys.consoleSession(hashSecret(cookie)));
    if (!live(item, nowMs)) return undefined;
    const role = str(item, 'role');
    const via = str(item, 'via');
    if ((role !== 'admin' && role !== 'viewer') || (via !== 'oidc' && via !== 'link')) return undefined;
    const actor: ConsoleActor = { via, label: str(item, 'label') ?? '' };
    for (const name of ['sub', 'email', 'name'] as const) {
      const value = str(item, `actor_${name}`);
      if (value !== undefined) actor[name] = value;
    }
    const session: ConsoleSession = { id: str(item, 'id') ?? '', role, actor, ip: str(item, 'ip') ?? '', createdAt: num(item, 'createdAt') ?? 0, expiresAt: num(item, 'expiresAt') ?? 0, csrfHash: str(item, 'csrfHash') ?? '' };
    const family = str(item, 'family');
    if (family !== undefined) session.family = family;
    return session;
  }

  /** Ends a session (sign-out); the session it was, if any. */
  async end(cookie: string, nowMs: number): Promise<ConsoleSession | undefined> {
    const session = await this.get(cookie, nowMs);
    if (TOKEN.test(cookie)) await this.#table.delete(identityKeys.consoleSession(hashSecret(cookie)));
    return session;
  }
}

/** The session's CSRF token: what the page sends with every change (in the `x-csrf-token` header). */
export function csrfFor(cookie: string): string {
  return createHash('sha256').update(`agent-gateway console csrf\n${cookie}`).digest('base64url');
}

/** The CSRF token a change carries matches its session's (constant time, on digests). */
export function csrfMatches(session: Pick<ConsoleSession, 'csrfHash'>, presented: string | undefined): boolean {
  if (presented === undefined || !TOKEN.test(presented)) return false;
  const given = Buffer.from(hashSecret(presented));
  const expected = Buffer.from(session.csrfHash);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
