import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { ensureStatsTable, ensureUsageTable, localDynamo, startEmbeddedStore, type EmbeddedStore } from '../../../bin/local/embedded-store.ts';
import type { DynamoApi } from '../../../lambda/aws/dynamodb.ts';
import type { RollupIncrement } from '../../../lambda/usage/rollup-fold.ts';
import { TTFB_BOUNDS_MS } from '../../../lambda/usage/stats-table.ts';
import type { UsageEvent } from '../../../lambda/usage/usage-event.ts';
import { seededRandom } from '../../support/chunking.ts';

/**
 * Usage events for the rollup tests: random ones from a seed, and what the rollups must hold for
 * them, computed here the plain way (one event at a time, strings cut from the ISO time), not
 * with the code under test.
 */

const pick = <T>(next: () => number, values: readonly T[]): T => values[Math.floor(next() * values.length)] as T;

/** Times around a year's, a month's and a day's end, and an ordinary afternoon. */
const BASES = ['2026-12-31T23:00:00Z', '2026-11-30T23:30:00Z', '2026-11-26T14:00:00Z', '2026-02-28T22:00:00Z'].map((at) => Date.parse(at));

export function randomEvents(seed: number, count: number, options: { at?: () => Date } = {}): UsageEvent[] {
  const next = seededRandom(seed);
  return Array.from({ length: count }, (_, i) => {
    const usage = next() < 0.15 ? undefined : { inputTokens: Math.floor(next() * 5000), outputTokens: Math.floor(next() * 2000), cacheReadTokens: next() < 0.5 ? 0 : Math.floor(next() * 90_000), cacheWriteTokens: next() < 0.7 ? 0 : Math.floor(next() * 4000) };
    const event: UsageEvent = {
      requestId: `req_${seed}_${i}_${Math.floor(next() * 1e9).toString(16)}`,
      at: options.at ? options.at() : new Date(pick(next, BASES) + Math.floor(next() * 3 * 3600_000)),
      groups: next() < 0.5 ? [] : [...new Set([pick(next, ['ml', 'interns', 'ops', 'a#b']), pick(next, ['ml', 'ops'])])],
      model: pick(next, ['claude-sonnet-5', 'fast', 'gpt-5.5']),
      modelDimension: pick(next, ['claude-sonnet-5', 'claude-*', 'gpt-5.5']),
      upstream: pick(next, ['ant', 'oai', 'bedrock']),
      costMicroUsd: usage ? Math.floor(next() * 250_000) : 0,
    };
    if (next() < 0.85) event.keyId = pick(next, ['key_0001', 'key_0002', 'key_0003']);
    if (next() < 0.6 || event.keyId === undefined) event.personSub = pick(next, ['sub|alice', 'sub|bob', '00u1x#carol']);
    if (next() < 0.95) event.status = pick(next, [200, 200, 200, 200, 400, 429, 500, 529]);
    if (next() < 0.5) event.outcome = pick(next, ['ok', 'ok', 'client_closed', 'upstream_failed']);
    if (next() < 0.9) event.ttfbMs = pick(next, [0, 25, 26, 60_000, 60_001, Math.floor(next() * 20_000)]);
    if (usage) event.usage = usage;
    return event;
  });
}

/** A map in key order, so that two are compared without regard to insertion order. */
export function sorted<T>(map: Map<string, T>): Map<string, T> {
  return new Map([...map].sort(([a], [b]) => a.localeCompare(b)));
}

/** The store's client, counting the calls of one operation (the reads a reader makes). */
export function counting(client: DynamoApi, counted: string): { client: DynamoApi; calls: number } {
  const counter = { calls: 0, client } as { client: DynamoApi; calls: number };
  counter.client = { call: ((operation: 'Query', input: never) => (operation === counted && counter.calls++, client.call(operation, input))) as DynamoApi['call'] };
  return counter;
}

/** A rollup row as a test sees it: its keys and its non-zero counters. */
export type Rows = Map<string, Record<string, number>>;

/** A fold's rows in the shape expectedRows gives (zeros left out). */
export function asRows(folded: Map<string, RollupIncrement>): Rows {
  const rows: Rows = new Map();
  for (const row of folded.values()) rows.set(`${row.pk}|${row.sk}`, Object.fromEntries(Object.entries(row.counters).filter(([, value]) => value !== 0)));
  return rows;
}

/** What the rollups must hold for `events`: `R#gran#dim#period|bucket#value` -> counters (zeros left out). */
export function expectedRows(events: readonly UsageEvent[]): Rows {
  const rows: Rows = new Map();
  for (const event of events) {
    const iso = event.at.toISOString();
    const buckets = { H: [iso.slice(0, 13), iso.slice(0, 10)], D: [iso.slice(0, 10), iso.slice(0, 7)], M: [iso.slice(0, 7), iso.slice(0, 4)] } as const;
    const values: [string, string][] = [['all', '*'], ['model', event.modelDimension], ['upstream', event.upstream]];
    if (event.keyId) values.push(['key', event.keyId]);
    if (event.personSub) values.push(['person', event.personSub]);
    for (const group of new Set(event.groups)) values.push(['group', group]);
    const error = (event.status ?? 500) >= 400 || (event.outcome !== undefined && event.outcome !== 'ok');
    let bucketIndex = -1;
    if (event.ttfbMs !== undefined) {
      bucketIndex = 0;
      while (bucketIndex < TTFB_BOUNDS_MS.length - 1 && event.ttfbMs > (TTFB_BOUNDS_MS[bucketIndex] as number)) bucketIndex++;
    }
    for (const [granularity, [bucket, period]] of Object.entries(buckets)) {
      for (const [dimension, value] of values) {
        const key = `R#${granularity}#${dimension}#${period}|${bucket}#${value}`;
        const row = rows.get(key) ?? {};
        const add = (name: string, amount: number) => amount && (row[name] = (row[name] ?? 0) + amount);
        add('requests', 1);
        add('errors', error ? 1 : 0);
        add('inputTokens', event.usage?.inputTokens ?? 0);
        add('outputTokens', event.usage?.outputTokens ?? 0);
        add('cacheReadTokens', event.usage?.cacheReadTokens ?? 0);
        add('cacheWriteTokens', event.usage?.cacheWriteTokens ?? 0);
        add('costMicroUsd', event.costMicroUsd);
        if (bucketIndex >= 0) add(`t${String(bucketIndex).padStart(2, '0')}`, 1);
        rows.set(key, row);
      }
    }
  }
  return rows;
}

/** A stats table's rollup rows, read with a Scan (a test may; the product never does). */
export async function scanRollups(dynamo: DynamoApi, tableName: string): Promise<{ rows: Rows; items: Record<string, AttributeValue>[] }> {
  const items = await scanAll(dynamo, tableName);
  const rows: Rows = new Map();
  for (const item of items.filter((each) => each.pk?.S?.startsWith('R#'))) {
    const counters: Record<string, number> = {};
    for (const [name, value] of Object.entries(item)) if (value.N !== undefined && !['expiresAt', 'lastMinute'].includes(name) && Number(value.N) !== 0) counters[name] = Number(value.N);
    rows.set(`${item.pk?.S}|${item.sk?.S}`, counters);
  }
  return { rows, items };
}

export async function scanAll(dynamo: DynamoApi, tableName: string): Promise<Record<string, AttributeValue>[]> {
  const items: Record<string, AttributeValue>[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamo.call('Scan', { TableName: tableName, ...(start ? { ExclusiveStartKey: start } : {}) });
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** An in-memory embedded store (dynalite) with fresh usage and stats tables. */
export async function freshTables(): Promise<{ store: EmbeddedStore; dynamo: DynamoApi; usageTable: string; statsTable: string; close(): Promise<void> }> {
  const store = await startEmbeddedStore(undefined);
  const dynamo = localDynamo(store.endpoint);
  const suffix = Math.random().toString(36).slice(2);
  const usageTable = `usage-${suffix}`;
  const statsTable = `stats-${suffix}`;
  await ensureUsageTable(dynamo, usageTable);
  await ensureStatsTable(dynamo, statsTable);
  return { store, dynamo, usageTable, statsTable, close: () => store.close() };
}
