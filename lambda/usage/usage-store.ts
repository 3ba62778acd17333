import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { conditionFailed, type DynamoApi } from '../aws/dynamodb.ts';
import { COUNTERS, dayPeriod, LEASE_PERIOD, minutePeriod, parseDayPeriod, USAGE_TABLE, type Counter } from './usage-table.ts';

export type UsageTotals = Record<Counter, number>;

export interface DayUsage extends UsageTotals {
  keyId: string;
  day: string;
  model: string;
}

/**
 * The one place that reads and writes the usage table. Every write is a single-item atomic
 * `ADD`, so concurrent requests on any number of instances neither lose nor double-count.
 */
export class DynamoUsageStore {
  readonly tableName: string;
  readonly #client: DynamoApi;

  constructor(tableName: string, client: DynamoApi) {
    this.tableName = tableName;
    this.#client = client;
  }

  /**
   * Adds counters to one key/model/day item in a single atomic `ADD` (one request's usage, or
   * many requests' added up by the UsageRecorder). Zero counters are left out of the update.
   */
  async add(keyId: string, day: string, model: string, counters: Partial<UsageTotals>, at: Date): Promise<void> {
    const values: Record<string, AttributeValue> = { ':at': { S: at.toISOString() } };
    const adds: string[] = [];
    for (const counter of COUNTERS) {
      const value = counters[counter];
      if (!value) continue;
      values[`:${counter}`] = { N: String(value) };
      adds.push(`${counter} :${counter}`);
    }
    if (adds.length === 0) return;
    await this.#client.call('UpdateItem', ({
        TableName: this.tableName,
        Key: this.#key(keyId, dayPeriod(day, model)),
        UpdateExpression: `ADD ${adds.join(', ')} SET updatedAt = :at`,
        ExpressionAttributeValues: values,
      }),
    );
  }

  /**
   * Counts a request against a per-minute limit, atomically: false (and nothing counted) when
   * the minute already holds `limit` requests.
   */
  async admitRequest(keyId: string, limit: number, at: Date): Promise<boolean> {
    try {
      await this.#client.call('UpdateItem', ({
          TableName: this.tableName,
          Key: this.#key(keyId, minutePeriod(at)),
          UpdateExpression: 'ADD requests :one SET expiresAt = :expires',
          ConditionExpression: 'attribute_not_exists(requests) OR requests < :limit',
          ExpressionAttributeValues: { ':one': { N: '1' }, ':limit': { N: String(limit) }, ':expires': { N: String(Math.floor(at.getTime() / 1000) + 3600) } },
        }),
      );
      return true;
    } catch (error) {
      if (conditionFailed(error)) return false;
      throw error;
    }
  }

  /**
   * Takes one of the key's `cap` slots for requests in progress, atomically across every
   * instance: a lease (`<expiry>#<id>`) joins the set on the key's INFLIGHT item unless it
   * already holds `cap`. A lease is given back with releaseLease; one whose holder never did (a
   * crashed or frozen instance) stops counting at its expiry (the request's deadline): when the
   * set is full, expired leases are removed and the slot is tried once more. One write when a
   * slot is free; a read and two more writes at most when the key is at its cap.
   */
  async acquireLease(keyId: string, leaseId: string, cap: number, expiresAt: Date, now: Date): Promise<boolean> {
    const lease = `${Math.ceil(expiresAt.getTime() / 1000)}#${leaseId}`;
    if (await this.#addLease(keyId, lease, cap)) return true;
    const { Item } = await this.#client.call('GetItem', { TableName: this.tableName, Key: this.#key(keyId, LEASE_PERIOD), ProjectionExpression: 'leases', ConsistentRead: true });
    const nowSeconds = now.getTime() / 1000;
    const expired = (Item?.leases?.SS ?? []).filter((held) => Number(held.slice(0, held.indexOf('#'))) <= nowSeconds);
    if (expired.length === 0) return false;
    await this.#removeLeases(keyId, expired);
    return this.#addLease(keyId, lease, cap);
  }

  /** Gives a lease back (acquireLease), with the same id and expiry. */
  releaseLease(keyId: string, leaseId: string, expiresAt: Date): Promise<void> {
    return this.#removeLeases(keyId, [`${Math.ceil(expiresAt.getTime() / 1000)}#${leaseId}`]);
  }

  /**
   * Removes every lease (npm start, at start-up: its embedded store serves that one process, so
   * leases found there were held by a run that ended without giving them back, a kill -9).
   */
  async forgetLeases(): Promise<void> {
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.#client.call('Scan', {
        TableName: this.tableName,
        FilterExpression: '#period = :leases',
        ExpressionAttributeNames: { '#period': USAGE_TABLE.sortKey },
        ExpressionAttributeValues: { ':leases': { S: LEASE_PERIOD } },
        ExclusiveStartKey: start,
      });
      for (const item of page.Items ?? []) await this.#client.call('UpdateItem', { TableName: this.tableName, Key: this.#key(item[USAGE_TABLE.partitionKey]?.S ?? '', LEASE_PERIOD), UpdateExpression: 'REMOVE leases' });
      start = page.LastEvaluatedKey;
    } while (start);
  }

  async #addLease(keyId: string, lease: string, cap: number): Promise<boolean> {
    try {
      await this.#client.call('UpdateItem', {
        TableName: this.tableName,
        Key: this.#key(keyId, LEASE_PERIOD),
        // The item expires (TTL) with its latest lease; it only tidies up, nothing relies on it.
        UpdateExpression: 'ADD leases :lease SET expiresAt = :expires',
        ConditionExpression: 'attribute_not_exists(leases) OR size(leases) < :cap',
        ExpressionAttributeValues: { ':lease': { SS: [lease] }, ':cap': { N: String(cap) }, ':expires': { N: lease.slice(0, lease.indexOf('#')) } },
      });
      return true;
    } catch (error) {
      if (conditionFailed(error)) return false;
      throw error;
    }
  }

  async #removeLeases(keyId: string, leases: string[]): Promise<void> {
    await this.#client.call('UpdateItem', { TableName: this.tableName, Key: this.#key(keyId, LEASE_PERIOD), UpdateExpression: 'DELETE leases :leases', ExpressionAttributeValues: { ':leases': { SS: leases } } });
  }

  /** The key's day items from `fromDay` (inclusive) on, across models. */
  days(keyId: string, fromDay: string): Promise<DayUsage[]> {
    return this.#dayItems((start) =>
      this.#client.call('Query', ({
          TableName: this.tableName,
          KeyConditionExpression: '#key = :key AND #period BETWEEN :from AND :to',
          ExpressionAttributeNames: { '#key': USAGE_TABLE.partitionKey, '#period': USAGE_TABLE.sortKey },
          ExpressionAttributeValues: { ':key': { S: keyId }, ':from': { S: `DAY#${fromDay}` }, ':to': { S: 'DAY#~' } },
          ExclusiveStartKey: start,
        }),
      ),
    );
  }

  /** Every key's day items from `fromDay` on (operator summaries; a Scan). */
  allDays(fromDay: string): Promise<DayUsage[]> {
    return this.#dayItems((start) =>
      this.#client.call('Scan', ({
          TableName: this.tableName,
          FilterExpression: '#period >= :from AND begins_with(#period, :day)',
          ExpressionAttributeNames: { '#period': USAGE_TABLE.sortKey },
          ExpressionAttributeValues: { ':from': { S: `DAY#${fromDay}` }, ':day': { S: 'DAY#' } },
          ExclusiveStartKey: start,
        }),
      ),
    );
  }

  /** Reads every page of a Query or Scan and keeps its day items. */
  async #dayItems(page: (start: Record<string, AttributeValue> | undefined) => Promise<{ Items?: Record<string, AttributeValue>[]; LastEvaluatedKey?: Record<string, AttributeValue> }>): Promise<DayUsage[]> {
    const items: DayUsage[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      const result = await page(start);
      for (const item of result.Items ?? []) {
        const parsed = toDayUsage(item);
        if (parsed) items.push(parsed);
      }
      start = result.LastEvaluatedKey;
    } while (start);
    return items;
  }

  #key(keyId: string, period: string): Record<string, AttributeValue> {
    return { [USAGE_TABLE.partitionKey]: { S: keyId }, [USAGE_TABLE.sortKey]: { S: period } };
  }
}

function toDayUsage(item: Record<string, AttributeValue>): DayUsage | undefined {
  const period = parseDayPeriod(item[USAGE_TABLE.sortKey]?.S ?? '');
  if (!period) return undefined;
  const usage = { keyId: item[USAGE_TABLE.partitionKey]?.S ?? '', ...period } as DayUsage;
  for (const counter of COUNTERS) usage[counter] = Number(item[counter]?.N ?? 0);
  return usage;
}

/** Tokens a budget counts: everything the provider processed for the key. */
export function totalTokens(usage: UsageTotals): number {
  return usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
}
