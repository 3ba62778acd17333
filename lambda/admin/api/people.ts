import * as z from 'zod/mini';
import type { CapChanges } from '../../identity/operators.ts';
import { readPersonSummary } from '../../identity/person-summary.ts';
import type { PersonRecord } from '../../identity/store/people.ts';
import { weekStart } from '../../usage/limits.ts';
import { bucketOf } from '../../usage/stats-table.ts';
import { utcDay } from '../../usage/usage-table.ts';
import type { AdminContext } from '../context.ts';
import { adminError, jsonBody } from '../http.ts';
import { parseBody } from './validate.ts';

/**
 * People who signed in (with an IdP): who, groups, when seen, and their spend this day, week and
 * month from the person rollups. The list reads the people's partition (one Query per MB, about
 * 3,000 people) and 2 or 3 rollup Queries, never a read per person; a person's page adds their
 * sessions (one Query) and their effective policy as `keys people show` gives it (their day items:
 * one Query). Revoking ends every session of theirs, console sessions included, and revokes the
 * keys tied to them, as `keys people revoke` does; their own caps change as `keys people
 * set-caps` changes them (IdentityOperations.setCaps, the same audit event).
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
    policy: await policyOf(context, person),
  };
}

/** What `keys people show --json` prints for them: models, each cap with its source and spend, pools. */
function policyOf(context: AdminContext, person: PersonRecord) {
  // People are there only with an identity config (index.ts); this keeps the types honest.
  if (!context.identityConfig) throw adminError.unavailable('Sign-in is not configured on this gateway.');
  return readPersonSummary(context.identityConfig, person, context.usage, new Date(context.now()));
}

/** Dollars (at most six decimals, as the key CLI takes them), null for no cap, "inherit" for the groups' or the default cap. */
const CapChange = z.union([
  z.number().check(
    z.minimum(0),
    z.maximum(1_000_000_000),
    z.refine((usd) => Math.abs(Math.round(usd * 1e6) - usd * 1e6) < 1e-6, 'at most six decimals (a micro-dollar)'),
  ),
  z.null(),
  z.literal('inherit'),
]);

export const CapsBody = z
  .strictObject({ daily: z.optional(CapChange), weekly: z.optional(CapChange), monthly: z.optional(CapChange) })
  .check(z.refine((body) => Object.keys(body).length > 0, 'name at least one of daily, weekly, monthly'));

/** Sets a person's own caps, as `keys people set-caps` does; answers the values before and after and their policy now. */
export async function setPersonCaps(context: AdminContext, sub: string) {
  const people = peopleOf(context);
  const changes = parseBody(CapsBody, jsonBody(context.request)) as CapChanges;
  const via = context.caller.via === 'session' ? 'console' : 'admin API';
  const result = await people.setCaps(sub, changes, context.caller.actor, via, context.now(), context.request.ip);
  const person = result && (await people.people.get(sub));
  if (!result || !person) throw adminError.notFound(`Nobody with the subject "${sub}" has signed in.`);
  return { sub, email: person.email ?? null, ...result, policy: await policyOf(context, person) };
}

export async function revokePerson(context: AdminContext, sub: string) {
  const people = peopleOf(context);
  const person = await people.people.get(sub);
  if (!person) throw adminError.notFound(`Nobody with the subject "${sub}" has signed in.`);
  return people.revokePerson(sub, context.keys, context.caller.actor, 'console', context.now());
}
