import * as z from 'zod/mini';
import * as operations from '../../auth/key-operations.ts';
import { issuedAnswer, KEY_BOUNDS, KeyOperationError, keyState, MAX_OVERLAP_SECONDS, publicView, type KeyAudit, type KeyState } from '../../auth/key-operations.ts';
import { LIMIT_NAMES, type KeyLimits } from '../../auth/key-table.ts';
import { bucketOf } from '../../usage/stats-table.ts';
import { Created, type AdminContext } from '../context.ts';
import { adminError, jsonBody } from '../http.ts';
import { parseBody } from './validate.ts';

/**
 * The key CLI's operations over HTTP (lambda/auth/key-operations.ts does both): list (one page:
 * one Scan of up to 500 keys, and one Query for this month's spend per key), create (the key is
 * in this answer only), change, rotate, revoke. Each change is an audit event.
 */
const Limit = z.int().check(z.minimum(1), z.maximum(Number.MAX_SAFE_INTEGER));
const Name = z.string().check(z.minLength(1), z.maxLength(KEY_BOUNDS.name));
const Models = z.array(z.string().check(z.minLength(1), z.maxLength(KEY_BOUNDS.model))).check(z.minLength(1), z.maxLength(KEY_BOUNDS.models));
const ExpiresIn = z.int().check(z.minimum(60), z.maximum(10 * 366 * 86_400));
const LimitsSet = z.strictObject(Object.fromEntries(LIMIT_NAMES.map((name) => [name, z.optional(Limit)])) as Record<(typeof LIMIT_NAMES)[number], z.ZodMiniOptional<typeof Limit>>);
const LimitsChange = z.strictObject(Object.fromEntries(LIMIT_NAMES.map((name) => [name, z.optional(z.nullable(Limit))])) as Record<(typeof LIMIT_NAMES)[number], z.ZodMiniOptional<z.ZodMiniNullable<typeof Limit>>>);

export const NewKeyBody = z.strictObject({
  name: Name,
  models: z.optional(Models),
  /** Seconds from now; absent: never expires. */
  expiresInSeconds: z.optional(ExpiresIn),
  limits: z.optional(LimitsSet),
  /** A person who has signed in, by `sub` or email. */
  owner: z.optional(z.string().check(z.minLength(1), z.maxLength(512))),
  role: z.optional(z.enum(['admin', 'viewer'])),
});

export const KeyChangeBody = z.strictObject({
  name: z.optional(Name),
  /** null: any model. */
  models: z.optional(z.nullable(Models)),
  /** Seconds from now; null: never expires. */
  expiresInSeconds: z.optional(z.nullable(ExpiresIn)),
  /** Each limit: a number sets it, null removes it; limits left out stay. */
  limits: z.optional(LimitsChange),
});

export const RotateBody = z.strictObject({ overlapSeconds: z.optional(z.int().check(z.minimum(0), z.maximum(MAX_OVERLAP_SECONDS))) });

const STATES: readonly KeyState[] = ['active', 'expired', 'revoked', 'malformed'];

function auditOf(context: AdminContext): KeyAudit {
  return (type, key, detail) => context.record({ type, key, detail });
}

/** The key operations' refusals as API errors. */
async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof KeyOperationError) throw error.kind === 'not_found' ? adminError.notFound(error.message) : adminError.invalid(error.message);
    throw error;
  }
}

export async function listKeys(context: AdminContext) {
  const query = context.request.query;
  const state = query.get('state') ?? undefined;
  if (state !== undefined && state !== '' && !(STATES as readonly string[]).includes(state)) throw adminError.invalid(`state must be one of ${STATES.join(', ')}.`, 'state');
  const text = query.get('q') ?? undefined;
  if (text !== undefined && text.length > 200) throw adminError.invalid('q is at most 200 characters.', 'q');
  const now = context.now();
  let page;
  try {
    page = await operations.listKeyPage(context.keys, { ...(query.get('cursor') ? { cursor: query.get('cursor') as string } : {}), filter: { ...(text ? { text } : {}), ...(state ? { state: state as KeyState } : {}) } }, now);
  } catch (error) {
    if (error instanceof RangeError) throw adminError.invalid(error.message, 'cursor');
    throw error;
  }
  const spend = await monthSpend(context, now);
  return {
    keys: page.keys.map((record) => ({ ...publicView(record), state: keyState(record, now), costThisMonthMicroUsd: spend?.get(record.id) ?? 0 })),
    cursor: page.cursor ?? null,
    spendAvailable: spend !== undefined,
  };
}

/** This month's spend per key: the key dimension's month rows (one Query). */
async function monthSpend(context: AdminContext, now: number): Promise<Map<string, number> | undefined> {
  if (!context.rollups) return undefined;
  const at = new Date(now);
  const from = new Date(`${bucketOf('M', at)}-01T00:00:00Z`);
  const totals = await context.rollups.totals('key', from, at, 'M', ['costMicroUsd']);
  return new Map(totals.map(({ value, totals: counters }) => [value, counters.costMicroUsd]));
}

async function ownerSub(context: AdminContext, owner: string | undefined): Promise<string | undefined> {
  if (owner === undefined) return undefined;
  if (!context.people) throw adminError.invalid('This gateway has no sign-in: a key cannot have an owner.', 'owner');
  const person = await context.people.find(owner).catch((error: unknown) => {
    throw adminError.invalid((error as Error).message, 'owner');
  });
  if (!person) throw adminError.invalid(`Nobody with the email or subject "${owner}" has signed in.`, 'owner');
  return person.sub;
}

export async function createKey(context: AdminContext) {
  const body = parseBody(NewKeyBody, jsonBody(context.request));
  const owner = await ownerSub(context, body.owner);
  const issued = await guarded(() =>
    operations.createKey(
      context.keys,
      {
        name: body.name,
        ...(body.models ? { models: body.models } : {}),
        ...(body.expiresInSeconds ? { expiresAt: Math.floor(context.now() / 1000) + body.expiresInSeconds } : {}),
        ...(body.limits ? { limits: body.limits as KeyLimits } : {}),
        ...(owner ? { owner } : {}),
        ...(body.role ? { role: body.role } : {}),
      },
      auditOf(context),
    ),
  );
  return new Created(issuedAnswer(issued.record, issued.key, context.request.origin));
}

export async function updateKey(context: AdminContext, id: string) {
  const body = parseBody(KeyChangeBody, jsonBody(context.request));
  const set: KeyLimits = {};
  const remove: (keyof KeyLimits)[] = [];
  for (const [name, value] of Object.entries(body.limits ?? {}) as [keyof KeyLimits, number | null | undefined][]) {
    if (value === null) remove.push(name);
    else if (value !== undefined) set[name] = value;
  }
  const expiresAt = body.expiresInSeconds === undefined ? undefined : body.expiresInSeconds === null ? null : Math.floor(context.now() / 1000) + body.expiresInSeconds;
  const updated = await guarded(() =>
    operations.updateKey(context.keys, id, { ...(body.name !== undefined ? { name: body.name } : {}), ...(body.models !== undefined ? { models: body.models } : {}), ...(expiresAt !== undefined ? { expiresAt } : {}), limits: { set, remove } }, auditOf(context), context.now()),
  );
  return { ...publicView(updated), state: keyState(updated, context.now()) };
}

export async function rotateKey(context: AdminContext, id: string) {
  const body = parseBody(RotateBody, jsonBody(context.request));
  const rotated = await guarded(() => operations.rotateKey(context.keys, id, body.overlapSeconds ?? 86_400, auditOf(context), context.now()));
  return { ...issuedAnswer(rotated.record, rotated.key, context.request.origin), previousWorksUntil: rotated.previousWorksUntil };
}

/** As `keys revoke --json` answers: instances that looked the key up recently accept it for up to the key cache's seconds more. */
export async function revokeKey(context: AdminContext, id: string) {
  const answer = await guarded(() => operations.revokeKey(context.keys, id, auditOf(context)));
  return { ...answer, effectiveWithinSeconds: context.keyCacheSeconds };
}


