import * as operations from '../../lambda/auth/key-operations.ts';
import { issuedAnswer, keyState, publicView, type KeyAudit, type KeyChanges, type NewKey } from '../../lambda/auth/key-operations.ts';
import type { DynamoKeyStore } from '../../lambda/auth/key-store.ts';
import type { KeyLimits, KeyRecord } from '../../lambda/auth/key-table.ts';
import { formatUsd, microToUsd } from '../../lambda/usage/cost.ts';
import { COUNTERS, isPersonAccount } from '../../lambda/usage/usage-table.ts';
import { totalTokens, type DayUsage, type DynamoUsageStore, type UsageTotals } from '../../lambda/usage/usage-store.ts';
import { setupText } from './setup-text.ts';
import { UsageError } from './key-options.ts';

/** The key CLI's commands; bin/keys.ts parses the arguments and opens the stores. */
export interface Output {
  json: boolean;
  print(text: string): void;
}

/** What operators see of a key: everything but the digest (lambda/auth/key-operations.ts). */
export { publicView };

export async function createKey(store: DynamoKeyStore, request: NewKey & { limits: KeyLimits; url: string }, out: Output, audit?: KeyAudit): Promise<void> {
  const { url, ...key } = request;
  const issued = await operations.createKey(store, key, audit);
  printIssued(issued.record, issued.key, url, out, `Created key ${issued.record.id} (${issued.record.name})`);
}

function printIssued(record: KeyRecord, key: string, url: string, out: Output, headline: string): void {
  if (out.json) return out.print(JSON.stringify(issuedAnswer(record, key, url)));
  out.print(`${headline}. It is shown only this once:\n\n  ${key}\n`);
  out.print(setupText(url, key));
}

export async function listKeys(store: DynamoKeyStore, out: Output): Promise<void> {
  const records = await store.list();
  if (out.json) return out.print(JSON.stringify(records.map(publicView)));
  if (records.length === 0) out.print('No keys.');
  for (const record of records) {
    const state = keyState(record);
    if (record.malformed) {
      out.print(`${record.id || '(no id)'}  ${state.toUpperCase()}  ${record.name}  (refused by the gateway: ${record.malformed.join(', ')}; revoke it and create a new key)`);
      continue;
    }
    const models = record.models === undefined ? 'any model' : record.models.join(',');
    const limits = describeLimits(record.limits ?? {});
    const role = record.role ? `; admin API ${record.role}` : '';
    out.print(`${record.id}  ${state.padEnd(7)}  ${record.name}  (${models}${limits ? `; ${limits}` : ''}${role}; created ${record.createdAt}; last used ${record.lastUsedAt ?? 'never'})`);
  }
}

/** `requestsPerMinute 60, usdPerDay $5.000000`: dollar budgets shown in dollars. */
function describeLimits(limits: KeyLimits): string {
  return Object.entries(limits)
    .map(([name, value]) => (name.startsWith('microUsd') ? `${name.replace('microUsd', 'usd')} ${formatUsd(value)}` : `${name} ${value}`))
    .join(', ');
}

/**
 * Revokes every key of the identity (the current one and any still in a rotation overlap), and
 * says when that reaches the gateway: a gateway trusts a key it looked up for its key-cache time.
 */
export async function revokeKey(store: DynamoKeyStore, id: string | undefined, out: Output, takesEffect: { seconds: number; text: string }, audit?: KeyAudit): Promise<void> {
  const answer = await operations.revokeKey(store, id, audit);
  out.print(out.json ? JSON.stringify({ ...answer, effectiveWithinSeconds: takesEffect.seconds }) : `Revoked ${answer.id}. ${takesEffect.text}`);
}

export type { KeyChanges };

/** Changes limits, allowlist, expiry or name of a key identity (and of its keys still in a rotation overlap). */
export async function updateKey(store: DynamoKeyStore, id: string | undefined, changes: KeyChanges, out: Output, audit?: KeyAudit): Promise<void> {
  const updated = await operations.updateKey(store, id, changes, audit);
  out.print(out.json ? JSON.stringify(publicView(updated)) : `Updated ${updated.id}: ${JSON.stringify(publicView(updated))}`);
}

/**
 * Issues a new key for the same identity (id, name, allowlist, limits, expiry; usage carries on)
 * and lets the old key(s) work for `overlapSeconds` more, so clients can switch without downtime.
 */
export async function rotateKey(store: DynamoKeyStore, id: string | undefined, overlapSeconds: number, url: string, out: Output, audit?: KeyAudit): Promise<void> {
  const rotated = await operations.rotateKey(store, id, overlapSeconds, audit);
  printIssued(rotated.record, rotated.key, url, out, `Rotated ${rotated.record.id}; the previous key works until ${rotated.previousWorksUntil}`);
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
  if (!id) throw new UsageError('usage needs the key id (see keys list)');
  const record = (await store.findAllById(id)).at(-1);
  if (!record) throw new UsageError(`No key with id ${id}`);
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
