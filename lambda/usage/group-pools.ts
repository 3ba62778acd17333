import type { AttributeValue, BatchGetItemOutput, KeysAndAttributes } from '@aws-sdk/client-dynamodb';
import type { DynamoApi } from '../aws/dynamodb.ts';
import { utcDay } from './usage-table.ts';
import { weekStart, type BudgetPeriod } from './limits.ts';
import { bucketOf, periodOf, STATS_TABLE, statsKeys } from './stats-table.ts';

/** A group's spend (micro-dollars) this UTC day, week (from Monday) and calendar month. */
export type PoolSpend = Record<BudgetPeriod, number>;

const DAY_MS = 86_400_000;
/** BatchGetItem takes at most 100 keys. */
const BATCH_KEYS = 100;
/** Rounds of retrying keys DynamoDB left unprocessed (throttling) before giving up. */
const UNPROCESSED_ROUNDS = 5;

type Key = Record<string, AttributeValue>;

/**
 * What whole groups have spent, for group pools, from the group rollups: the group's day rows
 * of this week (today's is the day) and its month row. One BatchGetItem per 12 groups (at most 8
 * keys each), plus a retry of any keys DynamoDB left unprocessed. The rollups lag by at most a
 * flush (npm start) or about 4 minutes (Lambda's aggregator): a pool can be overspent by what
 * its members spend in that time (docs/console.md).
 */
export async function poolSpend(tableName: string, client: DynamoApi, groups: readonly string[], at: Date): Promise<Map<string, PoolSpend>> {
  const today = utcDay(at);
  const monday = Date.parse(`${weekStart(at)}T00:00:00Z`);
  const weekDays = Array.from({ length: 7 }, (_, i) => utcDay(new Date(monday + i * DAY_MS))).filter((day) => day <= today);
  const month = bucketOf('M', at);
  const keyOf = (granularity: 'D' | 'M', bucket: string, group: string): Key => ({
    [STATS_TABLE.partitionKey]: { S: statsKeys.rollup(granularity, 'group', periodOf(granularity, bucket)) },
    [STATS_TABLE.sortKey]: { S: statsKeys.rollupSort(bucket, group) },
  });
  const spend = new Map<string, PoolSpend>(groups.map((group) => [group, { day: 0, week: 0, month: 0 }]));
  const keys = groups.flatMap((group) => [keyOf('M', month, group), ...weekDays.map((day) => keyOf('D', day, group))]);
  for (const item of await batchGetRows(tableName, client, keys, ['costMicroUsd'])) {
    const sk = item[STATS_TABLE.sortKey]?.S ?? '';
    const bucket = sk.slice(0, sk.indexOf('#'));
    const total = spend.get(sk.slice(bucket.length + 1));
    if (!total) continue;
    const cost = Number(item.costMicroUsd?.N ?? 0);
    if (bucket === month) total.month += cost;
    else total.week += cost;
    if (bucket === today) total.day += cost;
  }
  return spend;
}

/**
 * Rollup rows by key: one BatchGetItem per 100 keys (`parallel` at once), retrying the keys
 * DynamoDB left unprocessed (throttling). With `attributes`, only those of each row (and its
 * keys) are fetched.
 */
export async function batchGetRows(tableName: string, client: DynamoApi, keys: Key[], attributes?: readonly string[], parallel = 4): Promise<Key[]> {
  const batches: Key[][] = [];
  for (let i = 0; i < keys.length; i += BATCH_KEYS) batches.push(keys.slice(i, i + BATCH_KEYS));
  const items: Key[] = [];
  let next = 0;
  const worker = async () => {
    for (let batch = batches[next++]; batch !== undefined; batch = batches[next++]) items.push(...(await batchGet(tableName, client, batch, attributes)));
  };
  await Promise.all(Array.from({ length: Math.min(parallel, batches.length) }, worker));
  return items;
}

async function batchGet(tableName: string, client: DynamoApi, keys: Key[], attributes?: readonly string[]): Promise<Key[]> {
  const items: Key[] = [];
  const names: Record<string, string> = { '#pk': STATS_TABLE.partitionKey, '#sk': STATS_TABLE.sortKey };
  attributes?.forEach((name, i) => (names[`#a${i}`] = name));
  const projection = attributes ? { ProjectionExpression: ['#pk', '#sk', ...attributes.map((_, i) => `#a${i}`)].join(', '), ExpressionAttributeNames: names } : {};
  let request: Record<string, KeysAndAttributes> | undefined = { [tableName]: { Keys: keys, ...projection } };
  for (let round = 0; request !== undefined; round++) {
    if (round === UNPROCESSED_ROUNDS) throw new Error('The stats table left rollup reads unprocessed; try again.');
    if (round > 0) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** round));
    const result: BatchGetItemOutput = await client.call('BatchGetItem', { RequestItems: request });
    items.push(...(result.Responses?.[tableName] ?? []));
    const unprocessed: KeysAndAttributes | undefined = result.UnprocessedKeys?.[tableName];
    request = unprocessed?.Keys?.length ? { [tableName]: unprocessed } : undefined;
  }
  return items;
}

/**
 * Pool spend cached per instance for `ttlMs` (30 s by default): a request checking its person's
 * pools reads the table at most once per group per interval on each instance.
 */
export class PoolSpendCache {
  readonly #read: (groups: readonly string[], at: Date) => Promise<Map<string, PoolSpend>>;
  readonly #ttlMs: number;
  readonly #cache = new Map<string, { spend: PoolSpend; until: number; day: string }>();

  constructor(tableName: string, client: DynamoApi, ttlMs = 30_000) {
    this.#read = (groups, at) => poolSpend(tableName, client, groups, at);
    this.#ttlMs = ttlMs;
  }

  async spend(groups: readonly string[], at = new Date()): Promise<Map<string, PoolSpend>> {
    const now = at.getTime();
    const day = utcDay(at);
    const fresh = (group: string) => {
      const entry = this.#cache.get(group);
      return entry !== undefined && entry.until > now && entry.day === day ? entry : undefined;
    };
    const missing = groups.filter((group) => fresh(group) === undefined);
    if (missing.length > 0) {
      for (const [group, spend] of await this.#read(missing, at)) this.#cache.set(group, { spend, until: now + this.#ttlMs, day });
      // Bounded: a group read more than a TTL ago is dropped once the cache holds many.
      if (this.#cache.size > 10_000) for (const [group, entry] of this.#cache) if (entry.until <= now) this.#cache.delete(group);
    }
    return new Map(groups.map((group) => [group, (fresh(group) ?? { spend: { day: 0, week: 0, month: 0 } }).spend]));
  }
}
