import type { DynamoKeyStore } from '../../lambda/auth/key-store.ts';
import type { IdentityConfig } from '../../lambda/config/identity-schema.ts';
import type { CapChanges, IdentityOperations, PersonView } from '../../lambda/identity/operators.ts';
import { readPersonSummary, type PersonSummary } from '../../lambda/identity/person-summary.ts';
import type { DynamoUsageStore } from '../../lambda/usage/usage-store.ts';
import type { Output } from './key-commands.ts';
import { parseMicroUsd, UsageError } from './key-options.ts';

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

/** A person's effective policy: groups, models, each cap with where it comes from and what is spent, pools. */
export async function showPerson(identity: IdentityOperations, usage: DynamoUsageStore | undefined, config: IdentityConfig | undefined, subOrEmail: string | undefined, out: Output, now = new Date()): Promise<void> {
  if (!config) throw new UsageError('The gateway config has no "identity": there is no policy to show');
  const person = await personNamed(identity, subOrEmail, 'people show');
  const summary = await readPersonSummary(config, person, usage, now);
  if (out.json) return out.print(JSON.stringify(summary));
  out.print(`${summary.email ?? '(no email)'}  ${summary.sub}  [${summary.groups.join(',') || 'no groups'}]`);
  out.print(`  models: ${summary.models ? summary.models.join(', ') : 'any the gateway routes'}${summary.policyEntries.length > 0 ? `  (policies ${summary.policyEntries.map((index) => `#${index}`).join(' + ')})` : ''}`);
  out.print(`  managed settings: ${summary.managedSettingsChecksum ?? 'none'}`);
  for (const cap of summary.caps) {
    const limit = cap.limitUsd === null ? 'no cap' : `$${cap.limitUsd.toFixed(2)}`;
    const spent = usage ? `  spent $${cap.spentUsd.toFixed(2)}` : '';
    out.print(`  ${cap.period.padEnd(5)}  ${limit.padEnd(12)}  ${sourceWords(cap.source).padEnd(22)}${spent}  resets ${cap.resetsAt}`);
  }
  out.print(`  pools: ${summary.pools.length > 0 ? summary.pools.map((pool) => `${pool.group} $${pool.monthlyUsd.toFixed(2)}/month`).join(', ') : 'none'}`);
  if (summary.overridesBy) out.print(`  own caps set by ${summary.overridesBy.by}${summary.overridesBy.at ? ` at ${summary.overridesBy.at}` : ''}`);
}

function sourceWords(source: PersonSummary['caps'][number]['source']): string {
  if (source.from === 'group') return `group ${source.group}`;
  return { person: 'own (override)', default: 'default', none: '-' }[source.from];
}

/** `--daily/--weekly/--monthly N|none|inherit`: dollars, no cap, or back to the groups' or the default. */
export function parseCapChanges(values: { daily?: string | undefined; weekly?: string | undefined; monthly?: string | undefined }): CapChanges {
  const changes: CapChanges = {};
  for (const period of ['daily', 'weekly', 'monthly'] as const) {
    const text = values[period];
    if (text === undefined) continue;
    if (text === 'none') changes[period] = null;
    else if (text === 'inherit') changes[period] = 'inherit';
    else {
      const micro = text === '0' ? 0 : parseMicroUsd(text);
      if (micro === undefined) throw new UsageError(`--${period} takes dollars (e.g. 25 or 12.50), none (no cap) or inherit (the groups' or the default cap)`);
      changes[period] = micro / 1e6;
    }
  }
  if (Object.keys(changes).length === 0) throw new UsageError('people set-caps needs --daily, --weekly or --monthly');
  return changes;
}

/** Sets a person's own caps (audited); running gateways apply them within GATEWAY_SESSION_CACHE_SECONDS. */
export async function setPersonCaps(identity: IdentityOperations, subOrEmail: string | undefined, changes: CapChanges, out: Output): Promise<void> {
  const person = await personNamed(identity, subOrEmail, 'people set-caps');
  const result = await identity.setCaps(person.sub, changes, 'operator', 'keys people set-caps');
  if (!result) throw new UsageError(`Nobody with the subject "${person.sub}" has signed in`);
  if (out.json) return out.print(JSON.stringify({ sub: person.sub, email: person.email, ...result }));
  const words = (caps: typeof result.after) => ['daily', 'weekly', 'monthly'].map((period) => `${period} ${caps[period as keyof typeof caps] === undefined ? 'inherit' : caps[period as keyof typeof caps] === null ? 'none' : `$${caps[period as keyof typeof caps]}`}`).join(', ');
  out.print(`Own caps of ${person.email ?? person.sub}: ${words(result.after)} (were: ${words(result.before)}).`);
  out.print('Running gateways apply them within GATEWAY_SESSION_CACHE_SECONDS (10 s by default).');
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
