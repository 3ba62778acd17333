import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { conditionFailed, type DynamoApi } from '../aws/dynamodb.ts';
import type { RollupIncrement, RollupSource } from './rollup-fold.ts';
import { EVENT_RETENTION_DAYS, EVENT_SHARDS, STATS_TABLE, statsKeys } from './stats-table.ts';
import type { UsageEvent } from './usage-event.ts';

type Item = Record<string, AttributeValue>;

/** The epoch minute of a time: the unit events are partitioned and folded by. */
export function epochMinute(at: Date | number): number {
  return Math.floor((typeof at === 'number' ? at : at.getTime()) / 60_000);
}

/** The event partition of a request (a hash of its id): the same id always lands in the same item. */
export function shardOf(requestId: string): number {
  let hash = 2166136261;
  for (let i = 0; i < requestId.length; i++) hash = Math.imul(hash ^ requestId.charCodeAt(i), 16777619);
  return (hash >>> 0) % EVENT_SHARDS;
}

/**
 * The writes of the stats table and the aggregator's reads (the console's reads: rollups.ts).
 * Layout and why: docs/console.md, "Usage rollups".
 */
export class DynamoStatsStore {
  readonly tableName: string;
  readonly #client: DynamoApi;

  constructor(tableName: string, client: DynamoApi) {
    this.tableName = tableName;
    this.#client = client;
  }

  /**
   * Lambda: one request's usage event, one PutItem into one of the minute's 16 partitions.
   * Keyed by the request id, so a retried write overwrites itself instead of counting twice.
   */
  async putEvent(event: UsageEvent): Promise<void> {
    const minute = epochMinute(event.at);
    const item: Item = {
      [STATS_TABLE.partitionKey]: { S: statsKeys.event(minute, shardOf(event.requestId)) },
      [STATS_TABLE.sortKey]: { S: event.requestId },
      at: { N: String(event.at.getTime()) },
      model: { S: event.modelDimension },
      upstream: { S: event.upstream },
      inputTokens: { N: String(event.usage?.inputTokens ?? 0) },
      outputTokens: { N: String(event.usage?.outputTokens ?? 0) },
      cacheReadTokens: { N: String(event.usage?.cacheReadTokens ?? 0) },
      cacheWriteTokens: { N: String(event.usage?.cacheWriteTokens ?? 0) },
      costMicroUsd: { N: String(event.costMicroUsd) },
      [STATS_TABLE.ttlAttribute]: { N: String(Math.floor(event.at.getTime() / 1000) + EVENT_RETENTION_DAYS * 86_400) },
    };
    if (event.keyId !== undefined) item.keyId = { S: event.keyId };
    if (event.personSub !== undefined) item.person = { S: event.personSub };
    if (event.groups.length > 0) item.groups = { L: event.groups.map((group) => ({ S: group })) };
    if (event.status !== undefined) item.status = { N: String(event.status) };
    if (event.outcome !== undefined) item.outcome = { S: event.outcome };
    if (event.ttfbMs !== undefined) item.ttfbMs = { N: String(event.ttfbMs) };
    if (event.fallback) item.fallback = { BOOL: true };
    await this.#client.call('PutItem', { TableName: this.tableName, Item: item });
  }

  /** npm start, the only writer: adds a row's increments (a plain atomic ADD). */
  async addRollup(row: RollupIncrement): Promise<void> {
    await this.#client.call('UpdateItem', this.#rollupUpdate(row, undefined));
  }

  /**
   * The aggregator: adds a row's increments for one minute, unless the row already has that
   * minute or a later one (its watermark `lastMinute`). Minutes are applied to a row in order, so
   * a rerun or an overlapping run never counts one twice. False: it was already applied.
   */
  async applyRollup(row: RollupIncrement, minute: number): Promise<boolean> {
    try {
      await this.#client.call('UpdateItem', this.#rollupUpdate(row, minute));
      return true;
    } catch (error) {
      if (conditionFailed(error)) return false;
      throw error;
    }
  }

  #rollupUpdate(row: RollupIncrement, minute: number | undefined) {
    const names: Record<string, string> = { '#expires': STATS_TABLE.ttlAttribute };
    const values: Item = { ':expires': { N: String(row.expiresAt) } };
    const adds: string[] = [];
    for (const [name, value] of Object.entries(row.counters)) {
      if (!value) continue;
      const i = adds.length;
      names[`#c${i}`] = name;
      values[`:c${i}`] = { N: String(value) };
      adds.push(`#c${i} :c${i}`);
    }
    const sets = ['#expires = :expires'];
    if (minute !== undefined) {
      names['#last'] = 'lastMinute';
      values[':minute'] = { N: String(minute) };
      sets.push('#last = :minute');
    }
    return {
      TableName: this.tableName,
      Key: { [STATS_TABLE.partitionKey]: { S: row.pk }, [STATS_TABLE.sortKey]: { S: row.sk } },
      UpdateExpression: `${adds.length > 0 ? `ADD ${adds.join(', ')} ` : ''}SET ${sets.join(', ')}`,
      ...(minute === undefined ? {} : { ConditionExpression: 'attribute_not_exists(#last) OR #last < :minute' }),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    };
  }

  /**
   * Hands every event of one minute to `visit`, a page at a time: one strongly consistent Query
   * per partition (16), `parallel` partitions at once, each paged (1 MB). Only the pages being
   * read are held, however busy the minute. Returns the number of events.
   */
  async readMinute(minute: number, visit: (events: RollupSource[]) => void, parallel = 4): Promise<number> {
    let count = 0;
    let next = 0;
    const worker = async () => {
      for (let shard = next++; shard < EVENT_SHARDS; shard = next++) {
        await this.#partition(statsKeys.event(minute, shard), (items) => {
          count += items.length;
          visit(items.map(toRollupSource));
        });
      }
    };
    await Promise.all(Array.from({ length: parallel }, worker));
    return count;
  }

  /** Every event of one minute, at once (tests; the aggregator folds page by page). */
  async minuteEvents(minute: number): Promise<RollupSource[]> {
    const events: RollupSource[] = [];
    await this.readMinute(minute, (page) => events.push(...page));
    return events;
  }

  async #partition(pk: string, visit: (items: Item[]) => void): Promise<void> {
    let start: Item | undefined;
    do {
      const page = await this.#client.call('Query', {
        TableName: this.tableName,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': STATS_TABLE.partitionKey },
        ExpressionAttributeValues: { ':pk': { S: pk } },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      });
      visit(page.Items ?? []);
      start = page.LastEvaluatedKey;
    } while (start);
  }

  /** The last minute the aggregator has folded completely, if it ever has. */
  async cursor(): Promise<number | undefined> {
    const { Item: item } = await this.#client.call('GetItem', { TableName: this.tableName, Key: cursorKey(), ConsistentRead: true });
    return item?.lastMinute?.N === undefined ? undefined : Number(item.lastMinute.N);
  }

  /** Moves the cursor to `minute`; never back (an overlapping run may be ahead). */
  async advanceCursor(minute: number, at: Date): Promise<void> {
    try {
      await this.#client.call('UpdateItem', {
        TableName: this.tableName,
        Key: cursorKey(),
        UpdateExpression: 'SET lastMinute = :minute, updatedAt = :at',
        ConditionExpression: 'attribute_not_exists(lastMinute) OR lastMinute < :minute',
        ExpressionAttributeValues: { ':minute': { N: String(minute) }, ':at': { S: at.toISOString() } },
      });
    } catch (error) {
      if (!conditionFailed(error)) throw error;
    }
  }
}

function cursorKey(): Item {
  return { [STATS_TABLE.partitionKey]: { S: statsKeys.cursor.pk }, [STATS_TABLE.sortKey]: { S: statsKeys.cursor.sk } };
}

function toRollupSource(item: Item): RollupSource {
  const number = (name: string) => Number(item[name]?.N ?? 0);
  const source: RollupSource = {
    at: new Date(number('at')),
    groups: (item.groups?.L ?? []).map((group) => group.S ?? ''),
    modelDimension: item.model?.S ?? '',
    upstream: item.upstream?.S ?? '',
    usage: { inputTokens: number('inputTokens'), outputTokens: number('outputTokens'), cacheReadTokens: number('cacheReadTokens'), cacheWriteTokens: number('cacheWriteTokens') },
    costMicroUsd: number('costMicroUsd'),
  };
  if (item.keyId?.S !== undefined) source.keyId = item.keyId.S;
  if (item.person?.S !== undefined) source.personSub = item.person.S;
  if (item.status?.N !== undefined) source.status = Number(item.status.N);
  if (item.outcome?.S !== undefined) source.outcome = item.outcome.S;
  if (item.ttfbMs?.N !== undefined) source.ttfbMs = Number(item.ttfbMs.N);
  if (item.fallback?.BOOL) source.fallback = true;
  return source;
}
