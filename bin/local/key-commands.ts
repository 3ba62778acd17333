import type { DynamoKeyStore } from '../../lambda/auth/key-store.ts';
import { mintKey } from '../../lambda/auth/issue-key.ts';
import type { KeyLimits, KeyRecord } from '../../lambda/auth/key-table.ts';
import { formatUsd, microToUsd } from '../../lambda/usage/cost.ts';
import { COUNTERS, isPersonAccount } from '../../lambda/usage/usage-table.ts';
import { totalTokens, type DayUsage, type DynamoUsageStore, type UsageTotals } from '../../lambda/usage/usage-store.ts';
import { clientSetup, setupText } from './setup-text.ts';
import { UsageError } from './key-options.ts';

/** The key CLI's commands; bin/keys.ts parses the arguments and opens the stores. */
export interface Output {
  json: boolean;
  print(text: string): void;
}

/** What operators see of a key: everything but the digest. */
export function publicView(record: KeyRecord) {
  const { keyHash: _digest, ...rest } = record;
  return { ...rest, expiresAt: record.expiresAt === undefined ? undefined : new Date(record.expiresAt * 1000).toISOString() };
}

function stateOf(record: KeyRecord, now = Date.now()): string {
  // Refused by the gateway whatever its other attributes say (lambda/auth/key-item.ts).
  if (record.malformed) return 'MALFORMED';
  if (record.revoked) return 'revoked';
  return record.expiresAt !== undefined && record.expiresAt * 1000 <= now ? 'expired' : 'active';
}

export async function createKey(store: DynamoKeyStore, request: { name: string; models?: string[]; expiresAt?: number; limits: KeyLimits; owner?: string; url: string }, out: Output): Promise<void> {
  const { key, record } = mintKey(request);
  await store.put(record);
  printIssued(record, key, request.url, out, `Created key ${record.id} (${record.name})`);
}

function printIssued(record: KeyRecord, key: string, url: string, out: Output, headline: string): void {
  if (out.json) return out.print(JSON.stringify({ ...publicView(record), key, setup: clientSetup(url, key) }));
  out.print(`${headline}. It is shown only this once:\n\n  ${key}\n`);
  out.print(setupText(url, key));
}

export async function listKeys(store: DynamoKeyStore, out: Output): Promise<void> {
  const records = await store.list();
  if (out.json) return out.print(JSON.stringify(records.map(publicView)));
  if (records.length === 0) out.print('No keys.');
  for (const record of records) {
    if (record.malformed) {
      out.print(`${record.id || '(no id)'}  ${stateOf(record)}  ${record.name}  (refused by the gateway: ${record.malformed.join(', ')}; revoke it and create a new key)`);
      continue;
    }
    const models = record.models === undefined ? 'any model' : record.models.join(',');
    const limits = describeLimits(record.limits ?? {});
    out.print(`${record.id}  ${stateOf(record).padEnd(7)}  ${record.name}  (${models}${limits ? `; ${limits}` : ''}; created ${record.createdAt}; last used ${record.lastUsedAt ?? 'never'})`);
  }
}

/** `requestsPerMinute 60, usdPerDay $5.000000`: dollar budgets shown in dollars. */
function describeLimits(limits: KeyLimits): string {
  return Object.entries(limits)
    .map(([name, value]) => (name.startsWith('microUsd') ? `${name.replace('microUsd', 'usd')} ${formatUsd(value)}` : `${name} ${value}`))
    .join(', ');
}

async function keysOf(store: DynamoKeyStore, id: string | undefined, command: string): Promise<KeyRecord[]> {
  if (!id) throw new UsageError(`${command} needs the key id (see keys list)`);
  const records = await store.findAllById(id);
  if (records.length === 0) throw new UsageError(`No key with id ${id}`);
  return records;
}

/**
/**
 * The identity's keys, refusing to build on a malformed one: its settings cannot be read, so
 * copying or merging them (a rotation, an update of one limit) could drop a restriction.
 */
async function wellFormedKeysOf(store: DynamoKeyStore, id: string | undefined, command: string): Promise<KeyRecord[]> {
  const records = await keysOf(store, id, command);
  const malformed = records.find((record) => record.malformed);
  if (malformed) throw new UsageError(`Key ${malformed.id} has malformed attributes (${malformed.malformed?.join(', ')}); the gateway refuses it. Revoke it (keys revoke ${malformed.id}) and create a new key.`);
  return records;
}

/**
 * Revokes every key of the identity (the current one and any still in a rotation overlap), and
 * says when that reaches the gateway: a gateway trusts a key it looked up for its key-cache time.
 */
export async function revokeKey(store: DynamoKeyStore, id: string | undefined, out: Output, takesEffect: { seconds: number; text: string }): Promise<void> {
  for (const record of await keysOf(store, id, 'revoke')) await store.revoke(record.keyHash);
  out.print(out.json ? JSON.stringify({ id, revoked: true, effectiveWithinSeconds: takesEffect.seconds }) : `Revoked ${id}. ${takesEffect.text}`);
}

export interface KeyChanges {
  name?: string;
  models?: string[] | null;
  expiresAt?: number | null;
  limits: { set: KeyLimits; remove: (keyof KeyLimits)[] };
}

/**
 * Changes limits, allowlist, expiry or name of an identity: of its current key and of every
 * earlier key still live in a rotation overlap, so the old key never keeps settings the
 * operator has just changed. An earlier key's expiry is only ever brought forward: its overlap
 * end stays its latest possible expiry.
 */
export async function updateKey(store: DynamoKeyStore, id: string | undefined, changes: KeyChanges, out: Output): Promise<void> {
  const records = await wellFormedKeysOf(store, id, 'update');
  const current = records.at(-1) as KeyRecord;
  const limits: KeyLimits = { ...current.limits, ...changes.limits.set };
  for (const name of changes.limits.remove) delete limits[name];
  const limitsChanged = Object.keys(changes.limits.set).length > 0 || changes.limits.remove.length > 0;
  if (changes.name === undefined && changes.models === undefined && changes.expiresAt === undefined && !limitsChanged) {
    throw new UsageError('update needs at least one change: --name, --models, --expires-in or a limit flag');
  }
  const now = Math.floor(Date.now() / 1000);
  for (const record of records) {
    const live = !record.revoked && (record.expiresAt === undefined || record.expiresAt > now);
    if (record !== current && !live) continue;
    const expiresAt = record === current ? changes.expiresAt : earlierExpiry(record.expiresAt, changes.expiresAt);
    await store.update(record.keyHash, { name: changes.name, models: changes.models, expiresAt, limits: limitsChanged ? limits : undefined });
  }
  const updated = (await store.findAllById(current.id)).at(-1) as KeyRecord;
  out.print(out.json ? JSON.stringify(publicView(updated)) : `Updated ${updated.id}: ${JSON.stringify(publicView(updated))}`);
}

/** A new expiry for a key still in its rotation overlap: the requested one only when it comes sooner. */
function earlierExpiry(overlapEnd: number | undefined, requested: number | null | undefined): number | undefined {
  if (requested === undefined || requested === null) return undefined;
  return overlapEnd === undefined || requested < overlapEnd ? requested : undefined;
}

/**
 * Issues a new key for the same identity (id, name, allowlist, limits, expiry; usage carries on)
 * and lets the old key(s) work for `overlapSeconds` more, so clients can switch without downtime.
 */
export async function rotateKey(store: DynamoKeyStore, id: string | undefined, overlapSeconds: number, url: string, out: Output): Promise<void> {
  const records = await wellFormedKeysOf(store, id, 'rotate');
  const current = records.at(-1) as KeyRecord;
  if (current.revoked) throw new UsageError(`Key ${current.id} is revoked; create a new one instead`);
  const { key, record } = mintKey({ id: current.id, name: current.name, models: current.models, expiresAt: current.expiresAt, limits: current.limits, owner: current.owner });
  await store.put(record);
  const overlapEnds = Math.floor(Date.now() / 1000) + overlapSeconds;
  for (const old of records) {
    if (!old.revoked && (old.expiresAt === undefined || old.expiresAt > overlapEnds)) await store.update(old.keyHash, { expiresAt: overlapEnds });
  }
  printIssued(record, key, url, out, `Rotated ${current.id}; the previous key works until ${new Date(overlapEnds * 1000).toISOString()}`);
}

const ZERO: UsageTotals = { requests: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costMicroUsd: 0 };

function add(into: UsageTotals, from: UsageTotals): UsageTotals {
  for (const counter of COUNTERS) into[counter] += from[counter];
  return into;
}

/** The JSON view of counters: exact micro-dollars and the same in dollars. */
const withDollars = <T extends UsageTotals>(usage: T) => ({ ...usage, costUsd: microToUsd(usage.costMicroUsd) });

const row = (label: string, usage: UsageTotals) =>
  `${label.padEnd(44)} ${String(usage.requests).padStart(8)} ${String(usage.inputTokens).padStart(11)} ${String(usage.outputTokens).padStart(11)} ${String(usage.cacheReadTokens).padStart(11)} ${String(usage.cacheWriteTokens).padStart(11)} ${formatUsd(usage.costMicroUsd).padStart(15)}`;
const HEADER = `${''.padEnd(44)} ${'requests'.padStart(8)} ${'input'.padStart(11)} ${'output'.padStart(11)} ${'cache read'.padStart(11)} ${'cache write'.padStart(11)} ${'cost (USD)'.padStart(15)}`;

/** One key's usage since a day: per day and model, and the totals. */
export async function keyUsage(store: DynamoKeyStore, usage: DynamoUsageStore, id: string | undefined, since: string, out: Output): Promise<void> {
  const record = (await keysOf(store, id, 'usage')).at(-1) as KeyRecord;
  const days = (await usage.days(record.id, since)).sort((a, b) => a.day.localeCompare(b.day) || a.model.localeCompare(b.model));
  const totals = days.reduce((sum, day) => add(sum, day), { ...ZERO });
  if (out.json) {
    return out.print(JSON.stringify({ id: record.id, name: record.name, since, totals: { ...withDollars(totals), totalTokens: totalTokens(totals) }, days: days.map(({ keyId: _id, ...day }) => withDollars(day)) }));
  }
  out.print(`Usage of ${record.id} (${record.name}) since ${since}:\n${HEADER}`);
  for (const day of days) out.print(row(`${day.day}  ${day.model}`, day));
  out.print(row('total', totals));
}

/** Every key's usage since a day, one line per key (names from the key table). */
export async function usageSummary(store: DynamoKeyStore, usage: DynamoUsageStore, since: string, out: Output): Promise<void> {
  const names = new Map((await store.list()).map((record) => [record.id, record.name]));
  const perKey = new Map<string, UsageTotals>();
  // People's accounts (person#<sub>) add up the same spend again: only keys are listed here.
  for (const day of await usage.allDays(since)) if (!isPersonAccount(day.keyId)) perKey.set(day.keyId, add(perKey.get(day.keyId) ?? { ...ZERO }, day as DayUsage));
  const rows = [...perKey].sort(([a], [b]) => a.localeCompare(b)).map(([id, totals]) => ({ id, name: names.get(id) ?? '(deleted)', ...withDollars(totals), totalTokens: totalTokens(totals) }));
  if (out.json) return out.print(JSON.stringify({ since, keys: rows }));
  out.print(`Usage of all keys since ${since}:\n${HEADER}`);
  for (const entry of rows) out.print(row(`${entry.id}  ${entry.name}`, entry));
  if (rows.length === 0) out.print('No usage.');
}
