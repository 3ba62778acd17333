import type { ClientSetup } from './client-setup.ts';
import { clientSetup } from './client-setup.ts';
import { mintKey } from './issue-key.ts';
import type { KeyPage } from './key-store.ts';
import { LIMIT_NAMES, type KeyLimits, type KeyRecord } from './key-table.ts';

/**
 * What operators do with keys, once for both of their tools: the key CLI (bin/keys.ts) and the
 * console's admin API (lambda/admin/). Each operation validates, changes the key table, reports
 * to the audit trail when given one, and returns data; the CLI prints it, the API answers it as
 * JSON. So the two give the same answers (docs/admin-api.md, "Keys").
 */

/** The key-table operations used here (lambda/auth/key-store.ts). */
export interface KeyTableAccess {
  put(record: KeyRecord): Promise<void>;
  findAllById(id: string): Promise<KeyRecord[]>;
  update(keyHash: string, changes: { name?: string; models?: string[] | null; expiresAt?: number | null; limits?: KeyLimits | null }): Promise<void>;
  revoke(keyHash: string): Promise<boolean>;
  page(options: { limit: number; cursor?: string }): Promise<KeyPage>;
}

/** A request an operator got wrong (the CLI exits 2 with its usage text; the API answers 400 or 404). */
export class KeyOperationError extends Error {
  readonly kind: 'invalid' | 'not_found' | 'conflict';

  constructor(kind: KeyOperationError['kind'], message: string) {
    super(message);
    this.kind = kind;
  }
}

/** Audit events of key changes; the caller adds who did it, from where and through what. */
export type KeyAuditType = 'key_created' | 'key_updated' | 'key_rotated' | 'key_revoked';
export type KeyAudit = (type: KeyAuditType, keyId: string, detail: string) => Promise<void>;

/** What operators see of a key: everything but the digest, the expiry as an ISO time. */
export function publicView(record: KeyRecord) {
  const { keyHash: _digest, ...rest } = record;
  return { ...rest, expiresAt: record.expiresAt === undefined ? undefined : new Date(record.expiresAt * 1000).toISOString() };
}
export type PublicKeyView = ReturnType<typeof publicView>;

export type KeyState = 'active' | 'expired' | 'revoked' | 'malformed';

export function keyState(record: KeyRecord, now = Date.now()): KeyState {
  // Refused by the gateway whatever its other attributes say (lambda/auth/key-item.ts).
  if (record.malformed) return 'malformed';
  if (record.revoked) return 'revoked';
  return record.expiresAt !== undefined && record.expiresAt * 1000 <= now ? 'expired' : 'active';
}

/** A new key as both tools answer it: the key (shown once), its view, the client setup. */
export interface IssuedAnswer extends PublicKeyView {
  key: string;
  setup: ClientSetup;
}

export function issuedAnswer(record: KeyRecord, key: string, url: string): IssuedAnswer {
  return { ...publicView(record), key, setup: clientSetup(url, key) };
}

/** Longest key name, model list and model glob taken (the key item stays far below DynamoDB's 400 KB). */
export const KEY_BOUNDS = { name: 200, models: 100, model: 256 } as const;

export interface NewKey {
  name: string;
  models?: string[];
  /** Epoch seconds. */
  expiresAt?: number;
  limits?: KeyLimits;
  /** The person (IdP `sub`) the key acts for. */
  owner?: string;
  /** Admin API automation: `admin` may change things, `viewer` only read. */
  role?: 'admin' | 'viewer';
}

function checkName(name: string): void {
  if (name.trim() === '' || name.length > KEY_BOUNDS.name) throw new KeyOperationError('invalid', `A key's name must be 1 to ${KEY_BOUNDS.name} characters.`);
}

function checkModels(models: string[] | null | undefined): void {
  if (!models) return;
  if (models.length === 0 || models.length > KEY_BOUNDS.models || models.some((glob) => glob.trim() === '' || glob.length > KEY_BOUNDS.model)) {
    throw new KeyOperationError('invalid', `A key's models are 1 to ${KEY_BOUNDS.models} names or globs of 1 to ${KEY_BOUNDS.model} characters.`);
  }
}

function checkLimits(limits: KeyLimits | undefined): void {
  for (const [name, value] of Object.entries(limits ?? {})) {
    if (!(LIMIT_NAMES as readonly string[]).includes(name)) throw new KeyOperationError('invalid', `"${name}" is not a key limit; the limits are ${LIMIT_NAMES.join(', ')}.`);
    if (!Number.isSafeInteger(value) || (value as number) < 1) throw new KeyOperationError('invalid', `The limit ${name} must be a whole number above 0.`);
  }
}

function describe(record: Pick<KeyRecord, 'name' | 'models' | 'expiresAt' | 'limits' | 'owner' | 'role'>): string {
  const parts = [`name=${JSON.stringify(record.name)}`, `models=${record.models ? record.models.join(',') : 'any'}`];
  if (record.expiresAt !== undefined) parts.push(`expires=${new Date(record.expiresAt * 1000).toISOString()}`);
  for (const [name, value] of Object.entries(record.limits ?? {})) parts.push(`${name}=${value}`);
  if (record.owner !== undefined) parts.push(`owner=${record.owner}`);
  if (record.role !== undefined) parts.push(`role=${record.role}`);
  return parts.join(' ');
}

export async function createKey(store: KeyTableAccess, request: NewKey, audit?: KeyAudit): Promise<{ record: KeyRecord; key: string }> {
  checkName(request.name);
  checkModels(request.models);
  checkLimits(request.limits);
  const { key, record } = mintKey(request);
  await store.put(record);
  await audit?.('key_created', record.id, describe(record));
  return { record, key };
}

async function keysOf(store: KeyTableAccess, id: string | undefined): Promise<KeyRecord[]> {
  if (!id) throw new KeyOperationError('invalid', 'Name the key by its id (key_…).');
  const records = await store.findAllById(id);
  if (records.length === 0) throw new KeyOperationError('not_found', `No key with id ${id}.`);
  return records;
}

/**
 * The identity's keys, refusing to build on a malformed one: its settings cannot be read, so
 * copying or merging them (a rotation, an update of one limit) could drop a restriction.
 */
async function wellFormedKeysOf(store: KeyTableAccess, id: string | undefined): Promise<KeyRecord[]> {
  const records = await keysOf(store, id);
  const malformed = records.find((record) => record.malformed);
  if (malformed) throw new KeyOperationError('conflict', `Key ${malformed.id} has malformed attributes (${malformed.malformed?.join(', ')}); the gateway refuses it. Revoke it and create a new key.`);
  return records;
}

/** Revokes every key of the identity (the current one and any still in a rotation overlap). */
export async function revokeKey(store: KeyTableAccess, id: string | undefined, audit?: KeyAudit): Promise<{ id: string; revoked: true }> {
  const records = await keysOf(store, id);
  for (const record of records) await store.revoke(record.keyHash);
  await audit?.('key_revoked', records[0]?.id as string, `name=${JSON.stringify(records.at(-1)?.name ?? '')} keys=${records.length}`);
  return { id: records[0]?.id as string, revoked: true };
}

export interface KeyChanges {
  name?: string;
  /** null: any model. */
  models?: string[] | null;
  /** Epoch seconds; null: never expires. */
  expiresAt?: number | null;
  limits: { set: KeyLimits; remove: (keyof KeyLimits)[] };
}

/**
 * Changes limits, allowlist, expiry or name of an identity: of its current key and of every
 * earlier key still live in a rotation overlap, so the old key never keeps settings the
 * operator has just changed. An earlier key's expiry is only ever brought forward: its overlap
 * end stays its latest possible expiry.
 */
export async function updateKey(store: KeyTableAccess, id: string | undefined, changes: KeyChanges, audit?: KeyAudit, nowMs = Date.now()): Promise<KeyRecord> {
  if (changes.name !== undefined) checkName(changes.name);
  checkModels(changes.models);
  checkLimits(changes.limits.set);
  const records = await wellFormedKeysOf(store, id);
  const current = records.at(-1) as KeyRecord;
  const limits: KeyLimits = { ...current.limits, ...changes.limits.set };
  for (const name of changes.limits.remove) delete limits[name];
  const limitsChanged = Object.keys(changes.limits.set).length > 0 || changes.limits.remove.length > 0;
  if (changes.name === undefined && changes.models === undefined && changes.expiresAt === undefined && !limitsChanged) {
    throw new KeyOperationError('invalid', 'Nothing to change: give a name, models, an expiry or a limit.');
  }
  const now = Math.floor(nowMs / 1000);
  for (const record of records) {
    const live = !record.revoked && (record.expiresAt === undefined || record.expiresAt > now);
    if (record !== current && !live) continue;
    const expiresAt = record === current ? changes.expiresAt : earlierExpiry(record.expiresAt, changes.expiresAt);
    await store.update(record.keyHash, { name: changes.name, models: changes.models, expiresAt, limits: limitsChanged ? limits : undefined });
  }
  const updated = (await store.findAllById(current.id)).at(-1) as KeyRecord;
  await audit?.('key_updated', updated.id, `${describe(current)} -> ${describe(updated)}`);
  return updated;
}

/** A new expiry for a key still in its rotation overlap: the requested one only when it comes sooner. */
function earlierExpiry(overlapEnd: number | undefined, requested: number | null | undefined): number | undefined {
  if (requested === undefined || requested === null) return undefined;
  return overlapEnd === undefined || requested < overlapEnd ? requested : undefined;
}

/** Longest overlap a rotation may give the old key (30 days). */
export const MAX_OVERLAP_SECONDS = 30 * 86_400;

/**
 * Issues a new key for the same identity (id, name, allowlist, limits, expiry, owner, role; usage
 * carries on) and lets the old key(s) work for `overlapSeconds` more, so clients switch without downtime.
 */
export async function rotateKey(store: KeyTableAccess, id: string | undefined, overlapSeconds: number, audit?: KeyAudit, nowMs = Date.now()): Promise<{ record: KeyRecord; key: string; previousWorksUntil: string }> {
  if (!Number.isSafeInteger(overlapSeconds) || overlapSeconds < 0 || overlapSeconds > MAX_OVERLAP_SECONDS) {
    throw new KeyOperationError('invalid', `The overlap must be 0 to ${MAX_OVERLAP_SECONDS} seconds (30 days).`);
  }
  const records = await wellFormedKeysOf(store, id);
  const current = records.at(-1) as KeyRecord;
  if (current.revoked) throw new KeyOperationError('conflict', `Key ${current.id} is revoked; create a new one instead.`);
  const { key, record } = mintKey({ id: current.id, name: current.name, models: current.models, expiresAt: current.expiresAt, limits: current.limits, owner: current.owner, role: current.role }, new Date(nowMs));
  await store.put(record);
  const overlapEnds = Math.floor(nowMs / 1000) + overlapSeconds;
  for (const old of records) {
    if (!old.revoked && (old.expiresAt === undefined || old.expiresAt > overlapEnds)) await store.update(old.keyHash, { expiresAt: overlapEnds });
  }
  const previousWorksUntil = new Date(overlapEnds * 1000).toISOString();
  await audit?.('key_rotated', record.id, `previous key works until ${previousWorksUntil}`);
  return { record, key, previousWorksUntil };
}

export interface KeyFilter {
  /** Matched, case-insensitively, against the id, the name and the owner. */
  text?: string;
  state?: KeyState;
}

/** Keys read per page of the key list: one Scan of at most this many items (about 150 KB). */
export const KEY_PAGE_ITEMS = 500;

/**
 * One page of the key list: one Scan of up to KEY_PAGE_ITEMS items, filtered, newest first, and
 * the cursor of the next page (absent on the last). A filter is applied to the page read, so a
 * page may hold fewer keys than it read; the next page goes on where this one stopped.
 */
export async function listKeyPage(store: KeyTableAccess, options: { cursor?: string; filter?: KeyFilter; limit?: number } = {}, now = Date.now()): Promise<{ keys: KeyRecord[]; cursor?: string }> {
  const page = await store.page({ limit: options.limit ?? KEY_PAGE_ITEMS, ...(options.cursor ? { cursor: options.cursor } : {}) });
  const text = options.filter?.text?.trim().toLowerCase();
  const keys = page.records
    .filter((record) => !text || [record.id, record.name, record.owner ?? ''].some((field) => field.toLowerCase().includes(text)))
    .filter((record) => !options.filter?.state || keyState(record, now) === options.filter.state)
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  return { keys, ...(page.cursor ? { cursor: page.cursor } : {}) };
}
