import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { conditionFailed, type DynamoApi } from '../aws/dynamodb.ts';
import { fromItem, toItem } from './key-item.ts';
import { KEY_TABLE, type KeyLimits, type KeyRecord } from './key-table.ts';

/** One page of the key table, and where the next one starts (absent on the last). */
export interface KeyPage {
  records: KeyRecord[];
  cursor?: string;
}

/** A key digest: what a page cursor may carry (anything else is refused, never sent to DynamoDB). */
const KEY_HASH = /^[0-9a-f]{64}$/;

/**
 * The one place that reads and writes the key table. The gateway uses `get` and `touch`; the key
 * CLI uses the rest with operator credentials. The same code runs against DynamoDB on AWS and
 * against the embedded dynalite store locally.
 */
export class DynamoKeyStore {
  readonly tableName: string;
  readonly #client: DynamoApi;

  constructor(tableName: string, client: DynamoApi) {
    this.tableName = tableName;
    this.#client = client;
  }

  async get(keyHash: string): Promise<KeyRecord | undefined> {
    const { Item } = await this.#client.call('GetItem', ({ TableName: this.tableName, Key: { [KEY_TABLE.partitionKey]: { S: keyHash } } }),
    );
    return Item && fromItem(Item);
  }

  /** Records use, at most once per `intervalSeconds` across every gateway instance. */
  async touch(keyHash: string, now: Date, intervalSeconds: number): Promise<void> {
    const threshold = new Date(now.getTime() - intervalSeconds * 1000).toISOString();
    try {
      await this.#client.call('UpdateItem', ({
          TableName: this.tableName,
          Key: { [KEY_TABLE.partitionKey]: { S: keyHash } },
          UpdateExpression: 'SET lastUsedAt = :now',
          ConditionExpression: 'attribute_exists(keyHash) AND (attribute_not_exists(lastUsedAt) OR lastUsedAt < :threshold)',
          ExpressionAttributeValues: { ':now': { S: now.toISOString() }, ':threshold': { S: threshold } },
        }),
      );
    } catch (error) {
      if (!conditionFailed(error)) throw error;
    }
  }

  async put(record: KeyRecord): Promise<void> {
    await this.#client.call('PutItem', ({
        TableName: this.tableName,
        Item: toItem(record),
        ConditionExpression: 'attribute_not_exists(keyHash)',
      }),
    );
  }

  /** The current key of an identity: the newest one (a rotation leaves the old one expiring). */
  async findById(id: string): Promise<KeyRecord | undefined> {
    return (await this.findAllById(id)).at(-1);
  }

  /** Every key issued under a public id, oldest first (more than one after a rotation). */
  async findAllById(id: string): Promise<KeyRecord[]> {
    const { Items } = await this.#client.call('Query', ({
        TableName: this.tableName,
        IndexName: KEY_TABLE.idIndex,
        KeyConditionExpression: '#id = :id',
        ExpressionAttributeNames: { '#id': KEY_TABLE.idAttribute },
        ExpressionAttributeValues: { ':id': { S: id } },
      }),
    );
    const records = await Promise.all((Items ?? []).map((item) => this.get(item[KEY_TABLE.partitionKey]?.S ?? '')));
    return records.filter((record): record is KeyRecord => record !== undefined).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /**
   * Changes a key's settings. `undefined` leaves a field alone, `null` removes it (no allowlist,
   * no expiry, no limits).
   */
  async update(keyHash: string, changes: { name?: string; models?: string[] | null; expiresAt?: number | null; limits?: KeyLimits | null }): Promise<void> {
    const set: string[] = [];
    const remove: string[] = [];
    const values: Record<string, AttributeValue> = {};
    const names: Record<string, string> = {};
    const item = toItem({ keyHash, id: '', name: changes.name ?? '', createdAt: '', revoked: false, ...(changes.models ? { models: changes.models } : {}), ...(changes.expiresAt ? { expiresAt: changes.expiresAt } : {}), ...(changes.limits ? { limits: changes.limits } : {}) });
    for (const field of ['name', 'models', 'expiresAt', 'limits'] as const) {
      const change = changes[field];
      if (change === undefined) continue;
      // Placeholders for every name: `name` is a DynamoDB reserved word.
      names[`#${field}`] = field;
      if (change === null || (field === 'limits' && Object.keys(change).length === 0)) remove.push(`#${field}`);
      else {
        set.push(`#${field} = :${field}`);
        values[`:${field}`] = item[field] as AttributeValue;
      }
    }
    if (set.length === 0 && remove.length === 0) return;
    await this.#client.call('UpdateItem', ({
        TableName: this.tableName,
        Key: { [KEY_TABLE.partitionKey]: { S: keyHash } },
        UpdateExpression: [set.length > 0 ? `SET ${set.join(', ')}` : '', remove.length > 0 ? `REMOVE ${remove.join(', ')}` : ''].join(' ').trim(),
        ConditionExpression: 'attribute_exists(keyHash)',
        ExpressionAttributeNames: names,
        ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
      }),
    );
  }

  async list(): Promise<KeyRecord[]> {
    const records: KeyRecord[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.#client.call('Scan', ({ TableName: this.tableName, ExclusiveStartKey: start }));
      for (const item of page.Items ?? []) records.push(fromItem(item));
      start = page.LastEvaluatedKey;
    } while (start);
    return records.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /**
   * One page of at most `limit` keys (one Scan), for lists that must stay bounded whatever the
   * table holds (the console). The cursor is opaque to callers: the last key's digest.
   */
  async page(options: { limit: number; cursor?: string }): Promise<KeyPage> {
    let start: Record<string, AttributeValue> | undefined;
    if (options.cursor !== undefined) {
      const hash = Buffer.from(options.cursor, 'base64url').toString('utf8');
      if (!KEY_HASH.test(hash)) throw new RangeError('The cursor is not one this list gave.');
      start = { [KEY_TABLE.partitionKey]: { S: hash } };
    }
    const page = await this.#client.call('Scan', { TableName: this.tableName, Limit: options.limit, ...(start ? { ExclusiveStartKey: start } : {}) });
    const last = page.LastEvaluatedKey?.[KEY_TABLE.partitionKey]?.S;
    return { records: (page.Items ?? []).map(fromItem), ...(last ? { cursor: Buffer.from(last).toString('base64url') } : {}) };
  }

  /** Marks a key revoked; false when no such key exists. */
  async revoke(keyHash: string): Promise<boolean> {
    try {
      await this.#client.call('UpdateItem', ({
          TableName: this.tableName,
          Key: { [KEY_TABLE.partitionKey]: { S: keyHash } },
          UpdateExpression: 'SET revoked = :true',
          ConditionExpression: 'attribute_exists(keyHash)',
          ExpressionAttributeValues: { ':true': { BOOL: true } },
        }),
      );
      return true;
    } catch (error) {
      if (conditionFailed(error)) return false;
      throw error;
    }
  }
}
