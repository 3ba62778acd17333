import type { PersonRecord } from '../../identity/store/people.ts';
import { weekStart } from '../../usage/limits.ts';
import { bucketOf } from '../../usage/stats-table.ts';
import { utcDay } from '../../usage/usage-table.ts';
import type { AdminContext } from '../context.ts';
import { adminError } from '../http.ts';

/**
 * People who signed in (with an IdP): who, groups, when seen, and their spend this day, week and
 * month from the person rollups. The list reads the people's partition (one Query per MB, about
 * 3,000 people) and 2 or 3 rollup Queries, never a read per person; a person's page adds their
 * sessions (one Query). Revoking ends every session of theirs, console sessions included, and
 * revokes the keys tied to them, as `keys people revoke` does.
 */
function peopleOf(context: AdminContext) {
  if (!context.people) throw adminError.unavailable('Sign-in is not configured on this gateway: add an "identity" block to the config (docs/sign-in.md).');
  return context.people;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** What both the list and a person's page say of a person. */
function facts(person: PersonRecord) {
  return { sub: person.sub, email: person.email ?? null, name: person.name ?? null, groups: person.groups, firstSeenAt: iso(person.firstSeenAt), lastSeenAt: iso(person.lastSeenAt) };
}

/** Each person's spend (micro-dollars) today, this week (from Monday, UTC) and this month, from the person rollups. */
async function spendByPerson(context: AdminContext, now: Date): Promise<Map<string, { day: number; week: number; month: number }> | undefined> {
  const rollups = context.rollups;
  if (!rollups) return undefined;
  const today = utcDay(now);
  const [month, week] = await Promise.all([
    rollups.totals('person', new Date(`${bucketOf('M', now)}-01T00:00:00Z`), now, 'M', ['costMicroUsd']),
    // Day rows from Monday: the week's, and today's among them.
    rollups.series('person', 'D', new Date(`${weekStart(now)}T00:00:00Z`), now, ['costMicroUsd']),
  ]);
  const spend = new Map<string, { day: number; week: number; month: number }>();
  const entry = (sub: string) => spend.get(sub) ?? spend.set(sub, { day: 0, week: 0, month: 0 }).get(sub) as { day: number; week: number; month: number };
  for (const { value, totals } of month) entry(value).month = totals.costMicroUsd;
  const todayIndex = week.buckets.indexOf(today);
  for (const { value, points } of week.values) {
    const costs = points.costMicroUsd ?? [];
    entry(value).week = costs.reduce((sum, cost) => sum + cost, 0);
    entry(value).day = todayIndex === -1 ? 0 : (costs[todayIndex] ?? 0);
  }
  return spend;
}

export async function listPeople(context: AdminContext) {
  const people = peopleOf(context);
  const now = new Date(context.now());
  const [records, spend] = await Promise.all([people.people.list(), spendByPerson(context, now)]);
  return {
    people: records
      .sort((a, b) => b.lastSeenAt - a.lastSeenAt)
      .map((person) => ({ ...facts(person), spendMicroUsd: spend?.get(person.sub) ?? { day: 0, week: 0, month: 0 } })),
    spendAvailable: spend !== undefined,
  };
}

export async function showPerson(context: AdminContext, sub: string) {
  const people = peopleOf(context);
  const person = await people.find(sub).catch(() => undefined);
  if (!person || person.sub !== sub) throw adminError.notFound(`Nobody with the subject "${sub}" has signed in.`);
  return {
    ...facts(person),
    activeSessions: person.activeSessions,
    sessions: person.sessions.map((session) => ({ id: session.id, surface: session.surface, ip: session.ip, createdAt: iso(session.createdAt), endsAt: iso(session.expiresAt * 1000), revokedAt: session.revokedAt === undefined ? null : iso(session.revokedAt) })),
  };
}

export async function revokePerson(context: AdminContext, sub: string) {
  const people = peopleOf(context);
  const person = await people.people.get(sub);
  if (!person) throw adminError.notFound(`Nobody with the subject "${sub}" has signed in.`);
  return people.revokePerson(sub, context.keys, context.caller.actor, 'console', context.now());
}
