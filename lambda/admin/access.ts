import { presentedCredential } from '../auth/credential.ts';
import { hashApiKey } from '../auth/key-material.ts';
import type { KeyRecord } from '../auth/key-table.ts';
import { cookieName } from '../identity/http.ts';
import type { IdentityDoor } from '../identity/index.ts';
import type { SessionStore } from '../identity/store/sessions.ts';
import type { ConsoleRole, ConsoleSession, ConsoleSessions } from './console-sessions.ts';
import { csrfMatches } from './console-sessions.ts';
import { adminError, sameOrigin, type AdminRequest } from './http.ts';

/** The console's session cookie (`__Host-gw_console` on https). */
export const SESSION_COOKIE = 'gw_console';
/** The header every change made with a console session carries. */
export const CSRF_HEADER = 'x-csrf-token';

/** Who calls the admin API, and what they may do. */
export interface Caller {
  role: ConsoleRole;
  /** How they proved it: a console session (cookie), an issued key with a role, a sign-in access token. */
  via: 'session' | 'key' | 'token';
  /** Who, for audit events and the page: an email, a sub, a key id, "one-time link". */
  actor: string;
  sub?: string;
  email?: string;
  name?: string;
  /** Cookie sessions: the session and the cookie that opened it. */
  session?: ConsoleSession;
  cookie?: string;
}

export interface AccessDeps {
  keys: { get(keyHash: string): Promise<KeyRecord | undefined> };
  sessions: ConsoleSessions | undefined;
  /** The sign-in families, to see that an IdP sign-in's session was not revoked. */
  families: SessionStore | undefined;
  identity: IdentityDoor | undefined;
  /** The identity config's console groups. */
  adminGroups: readonly string[];
  viewerGroups: readonly string[];
  now(): number;
}

/** A person's console role from their groups: admin wins over viewer; none: no console. */
export function roleOf(groups: readonly string[], deps: Pick<AccessDeps, 'adminGroups' | 'viewerGroups'>): ConsoleRole | undefined {
  if (groups.some((group) => deps.adminGroups.includes(group))) return 'admin';
  if (groups.some((group) => deps.viewerGroups.includes(group))) return 'viewer';
  return undefined;
}

/**
 * The caller of an admin API request: a Bearer credential when one is sent (an issued key with a
 * `role`, or a signed-in person's access token whose groups give a role), else the console
 * session cookie. Throws 401 when there is none or it is not valid, 403 when it grants no role.
 */
export async function callerOf(request: AdminRequest, deps: AccessDeps): Promise<Caller> {
  const headers = request.event.headers;
  if (headers.authorization !== undefined || headers['x-api-key'] !== undefined) return bearerCaller(request, deps);
  const cookie = request.cookies[cookieName(request.origin, SESSION_COOKIE)];
  if (cookie === undefined || !deps.sessions) throw adminError.unauthenticated();
  const session = await deps.sessions.get(cookie, deps.now());
  if (!session) throw adminError.unauthenticated('Your console session has ended: sign in again.');
  if (session.family !== undefined) {
    const family = await deps.families?.get(session.family, deps.now());
    if (!family || family.revokedAt !== undefined) throw adminError.unauthenticated('Your console session was revoked: sign in again.');
  }
  const { actor } = session;
  return { role: session.role, via: 'session', actor: actor.label, session, cookie, ...(actor.sub ? { sub: actor.sub } : {}), ...(actor.email ? { email: actor.email } : {}), ...(actor.name ? { name: actor.name } : {}) };
}

async function bearerCaller(request: AdminRequest, deps: AccessDeps): Promise<Caller> {
  const credential = presentedCredential(request.event.headers);
  if (credential === undefined) throw adminError.unauthenticated('The Bearer credential is not one this gateway issued.');
  if (credential.kind === 'key') {
    const record = await deps.keys.get(hashApiKey(credential.value));
    const now = deps.now();
    if (!record || record.malformed || record.revoked || (record.expiresAt !== undefined && record.expiresAt * 1000 <= now)) throw adminError.unauthenticated('This key is not valid (unknown, revoked or expired).');
    if (!record.role) throw adminError.forbidden('This key has no console role; create one for the admin API with: npm run keys -- create --name NAME --role admin (or viewer).', 'role_required');
    return { role: record.role, via: 'key', actor: `key ${record.id}` };
  }
  const principal = deps.identity ? await deps.identity.principal(credential.value) : undefined;
  const person = principal?.person;
  if (!person) throw adminError.unauthenticated('This sign-in token has expired or was revoked: sign in again.');
  const role = roleOf(person.groups, deps);
  if (!role) throw adminError.forbidden('You are not in a group that may use the console (identity.adminGroups or viewerGroups).', 'role_required');
  return { role, via: 'token', actor: person.email ?? person.sub, sub: person.sub, ...(person.email ? { email: person.email } : {}), ...(person.name ? { name: person.name } : {}) };
}

/**
 * A change (any method but GET and HEAD) needs the admin role; with a console session, also the
 * session's CSRF token in `x-csrf-token` and the browser's word that the request came from a page
 * of this origin. Bearer callers are not at risk of CSRF: browsers never send a Bearer on their own.
 */
export function checkChange(request: AdminRequest, caller: Caller): void {
  if (caller.via === 'session') {
    const session = caller.session as ConsoleSession;
    if (!sameOrigin(request) || !csrfMatches(session, request.event.headers[CSRF_HEADER])) {
      throw adminError.forbidden('This change was not sent by the console page (its CSRF token or origin is missing or wrong). Reload the page and try again.', 'csrf_failed');
    }
  }
  if (caller.role !== 'admin') throw adminError.forbidden('Viewers may look, not change: ask an admin.', 'admin_role_required');
}
