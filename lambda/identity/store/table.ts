import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { conditionFailed, type DynamoApi } from '../../aws/dynamodb.ts';
import { IDENTITY_TABLE, SINGLE } from '../identity-table.ts';

export type Item = Record<string, AttributeValue>;

const PK = IDENTITY_TABLE.partitionKey;

/**
 * The identity table as the sign-in stores use it: items addressed by (pk, sk), reads strongly
 * consistent (a revocation or a single use must be seen by the next read, whichever instance
 * makes it), every item expiring on `expiresAt`. DynamoDB deletes expired items lazily (within
 * days), so every read checks the expiry itself (`live`).
 */
export class IdentityTable {
  readonly name: string;
  readonly #client: DynamoApi;

  constructor(name: string, client: DynamoApi) {
    this.name = name;
    this.#client = client;
  }

  async get(pk: string, sk = SINGLE): Promise<Item | undefined> {
    const { Item: item } = await this.#client.call('GetItem', { TableName: this.name, Key: key(pk, sk), ConsistentRead: true });
    return item;
  }

  /** Writes a whole item; with `onlyNew`, false (and nothing written) when it exists already. */
  async put(pk: string, sk: string, fields: Item, onlyNew = false): Promise<boolean> {
    try {
      await this.#client.call('PutItem', {
        TableName: this.name,
        Item: { ...fields, ...key(pk, sk) },
        ...(onlyNew ? { ConditionExpression: `attribute_not_exists(${PK})` } : {}),
      });
      return true;
    } catch (error) {
      if (onlyNew && conditionFailed(error)) return false;
      throw error;
    }
  }

  /**
   * One UpdateItem. Returns the item as it is after the update (ALL_NEW), or undefined when the
   * condition did not hold (nothing changed).
   */
  async update(pk: string, sk: string, update: Update): Promise<Item | undefined> {
    try {
      const { Attributes } = await this.#client.call('UpdateItem', {
        TableName: this.name,
        Key: key(pk, sk),
        UpdateExpression: update.expression,
        ...(update.condition ? { ConditionExpression: update.condition } : {}),
        ...(update.names ? { ExpressionAttributeNames: update.names } : {}),
        ...(update.values && Object.keys(update.values).length > 0 ? { ExpressionAttributeValues: update.values } : {}),
        ReturnValues: 'ALL_NEW',
      });
      return Attributes ?? {};
    } catch (error) {
      if (update.condition && conditionFailed(error)) return undefined;
      throw error;
    }
  }

  /** Deletes an item and returns what it held: whoever gets it back is its one user. */
  async take(pk: string, sk = SINGLE): Promise<Item | undefined> {
    const { Attributes } = await this.#client.call('DeleteItem', { TableName: this.name, Key: key(pk, sk), ReturnValues: 'ALL_OLD' });
    return Attributes;
  }

  async delete(pk: string, sk = SINGLE): Promise<void> {
    await this.#client.call('DeleteItem', { TableName: this.name, Key: key(pk, sk) });
  }

  /** One page of a partition: at most `limit` items after the sort key `after`, in sort-key order or (newestFirst) reversed. */
  async query(pk: string, options: { limit: number; after?: string; newestFirst?: boolean }): Promise<{ items: Item[]; last?: string }> {
    const page = await this.#client.call('Query', {
      TableName: this.name,
      KeyConditionExpression: `${PK} = :pk`,
      ExpressionAttributeValues: { ':pk': { S: pk } },
      ConsistentRead: true,
      Limit: options.limit,
      ScanIndexForward: !options.newestFirst,
      ...(options.after !== undefined ? { ExclusiveStartKey: key(pk, options.after) } : {}),
    });
    const last = page.LastEvaluatedKey?.[IDENTITY_TABLE.sortKey]?.S;
    return { items: page.Items ?? [], ...(last !== undefined ? { last } : {}) };
  }

  /** Every item of a partition, in sort-key order (paged through). */
  async partition(pk: string): Promise<Item[]> {
    const items: Item[] = [];
    let start: Item | undefined;
    do {
      const page = await this.#client.call('Query', {
        TableName: this.name,
        KeyConditionExpression: `${PK} = :pk`,
        ExpressionAttributeValues: { ':pk': { S: pk } },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      });
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  }
}

export interface Update {
  expression: string;
  condition?: string;
  names?: Record<string, string>;
  values?: Item;
}

function key(pk: string, sk: string): Item {
  return { [PK]: { S: pk }, [IDENTITY_TABLE.sortKey]: { S: sk } };
}

export const S = (value: string): AttributeValue => ({ S: value });
export const N = (value: number): AttributeValue => ({ N: String(value) });
export const L = (values: readonly string[]): AttributeValue => ({ L: values.map((value) => ({ S: value })) });

export function str(item: Item, name: string): string | undefined {
  return item[name]?.S;
}

export function num(item: Item, name: string): number | undefined {
  const value = item[name]?.N;
  return value === undefined ? undefined : Number(value);
}

export function list(item: Item, name: string): string[] {
  return (item[name]?.L ?? []).flatMap((value) => (value.S === undefined ? [] : [value.S]));
}

/** Epoch seconds, the unit of the table's TTL attribute. */
export function epochSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/** The item exists and has not expired (DynamoDB's TTL deletes late). */
export function live(item: Item | undefined, nowMs: number): item is Item {
  const expiresAt = item && num(item, IDENTITY_TABLE.ttlAttribute);
  return item !== undefined && (expiresAt === undefined || expiresAt * 1000 > nowMs);
}
