import type { DynamoKeyStore } from '../../lambda/auth/key-store.ts';
import type { IdentityOperations, PersonView } from '../../lambda/identity/operators.ts';
import type { Output } from './key-commands.ts';
import { UsageError } from './key-options.ts';

/** The key CLI's `people` commands (sign-in, docs/sign-in.md); bin/keys.ts parses the arguments. */

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Everyone who has signed in: who, groups, when last seen, how many sessions work now. */
export async function listPeople(identity: IdentityOperations, out: Output): Promise<void> {
  const people = (await identity.list()).sort((a, b) => b.lastSeenAt - a.lastSeenAt);
  if (out.json) return out.print(JSON.stringify(people.map(view)));
  if (people.length === 0) return out.print('Nobody has signed in yet.');
  for (const person of people) {
    const groups = person.groups.length > 0 ? person.groups.join(',') : 'no groups';
    out.print(`${person.email ?? '(no email)'}  ${person.sub}  [${groups}]  last seen ${iso(person.lastSeenAt)}  ${person.activeSessions} active session(s)`);
  }
}

/**
 * Ends a person's access at once: every session (their signed-in clients stop within the
 * session cache's seconds, and their refresh tokens are refused), and every key tied to them.
 * They can sign in again while the IdP lets them: remove them there to keep them out.
 */
export async function revokePerson(identity: IdentityOperations, keys: DynamoKeyStore, subOrEmail: string | undefined, out: Output): Promise<void> {
  const person = await personNamed(identity, subOrEmail, 'people revoke');
  const revoked = await identity.revokePerson(person.sub, keys, 'operator', 'keys people revoke');
  const sessions = revoked?.sessionsEnded ?? [];
  const keyIds = revoked?.keysRevoked ?? [];
  if (out.json) return out.print(JSON.stringify({ sub: person.sub, email: person.email, sessionsEnded: sessions, keysRevoked: keyIds }));
  out.print(`Ended ${sessions.length} session(s) of ${person.email ?? person.sub}${keyIds.length > 0 ? ` and revoked their key(s) ${keyIds.join(', ')}` : ''}.`);
  out.print('They can sign in again while the identity provider lets them: remove them there (or from allowedGroups) to keep them out.');
}

/** The person a key is created for (`keys create --owner`): someone who has signed in. */
export async function personNamed(identity: IdentityOperations, subOrEmail: string | undefined, command: string): Promise<PersonView> {
  if (!subOrEmail) throw new UsageError(`${command} needs a person: their email or IdP subject (see people list)`);
  const person = await identity.find(subOrEmail);
  if (!person) throw new UsageError(`Nobody with the email or subject "${subOrEmail}" has signed in (see people list)`);
  return person;
}

function view(person: PersonView) {
  return {
    sub: person.sub,
    email: person.email,
    name: person.name,
    groups: person.groups,
    firstSeenAt: iso(person.firstSeenAt),
    lastSeenAt: iso(person.lastSeenAt),
    activeSessions: person.activeSessions,
    sessions: person.sessions.map((session) => ({ id: session.id, surface: session.surface, ip: session.ip, createdAt: iso(session.createdAt), endsAt: iso(session.expiresAt * 1000), ...(session.revokedAt ? { revokedAt: iso(session.revokedAt) } : {}) })),
  };
}
