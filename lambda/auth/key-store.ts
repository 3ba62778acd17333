import {
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  UpdateItemCommand,
  ConditionalCheckFailedException,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import { KEY_TABLE, type KeyRecord } from './key-table.ts';

/**
 * The one place that reads and writes the key table. The gateway uses `get` and `touch`; the key
 * CLI uses the rest with operator credentials. The same code runs against DynamoDB on AWS and
 * against the embedded dynalite store locally.
 */
export class DynamoKeyStore {
  readonly tableName: string;
  readonly #client: DynamoDBClient;

  constructor(tableName: string, client: DynamoDBClient) {
    this.tableName = tableName;
    this.#client = client;
  }

  async get(keyHash: string): Promise<KeyRecord | undefined> {
    const { Item } = await this.#client.send(
      new GetItemCommand({ TableName: this.tableName, Key: { [KEY_TABLE.partitionKey]: { S: keyHash } } }),
    );
    return Item && fromItem(Item);
  }

  /** Records use, at most once per `intervalSeconds` across every gateway instance. */
  async touch(keyHash: string, now: Date, intervalSeconds: number): Promise<void> {
    const threshold = new Date(now.getTime() - intervalSeconds * 1000).toISOString();
    try {
      await this.#client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { [KEY_TABLE.partitionKey]: { S: keyHash } },
          UpdateExpression: 'SET lastUsedAt = :now',
          ConditionExpression: 'attribute_exists(keyHash) AND (attribute_not_exists(lastUsedAt) OR lastUsedAt < :threshold)',
          ExpressionAttributeValues: { ':now': { S: now.toISOString() }, ':threshold': { S: threshold } },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  async put(record: KeyRecord): Promise<void> {
    await this.#client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: toItem(record),
        ConditionExpression: 'attribute_not_exists(keyHash)',
      }),
    );
  }

  async findById(id: string): Promise<KeyRecord | undefined> {
    const { Items } = await this.#client.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: KEY_TABLE.idIndex,
        KeyConditionExpression: '#id = :id',
        ExpressionAttributeNames: { '#id': KEY_TABLE.idAttribute },
        ExpressionAttributeValues: { ':id': { S: id } },
      }),
    );
    const hash = Items?.[0]?.[KEY_TABLE.partitionKey]?.S;
    return hash === undefined ? undefined : this.get(hash);
  }

  async list(): Promise<KeyRecord[]> {
    const records: KeyRecord[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.#client.send(new ScanCommand({ TableName: this.tableName, ExclusiveStartKey: start }));
      for (const item of page.Items ?? []) records.push(fromItem(item));
      start = page.LastEvaluatedKey;
    } while (start);
    return records.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** Marks a key revoked; false when no such key exists. */
  async revoke(keyHash: string): Promise<boolean> {
    try {
      await this.#client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { [KEY_TABLE.partitionKey]: { S: keyHash } },
          UpdateExpression: 'SET revoked = :true',
          ConditionExpression: 'attribute_exists(keyHash)',
          ExpressionAttributeValues: { ':true': { BOOL: true } },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }
}

function toItem(record: KeyRecord): Record<string, AttributeValue> {
  const item: Record<string, AttributeValue> = {
    keyHash: { S: record.keyHash },
    id: { S: record.id },
    name: { S: record.name },
    createdAt: { S: record.createdAt },
    revoked: { BOOL: record.revoked },
  };
  if (record.expiresAt !== undefined) item.expiresAt = { N: String(record.expiresAt) };
  if (record.models !== undefined) item.models = { L: record.models.map((glob) => ({ S: glob })) };
  if (record.lastUsedAt !== undefined) item.lastUsedAt = { S: record.lastUsedAt };
  return item;
}

function fromItem(item: Record<string, AttributeValue>): KeyRecord {
  const record: KeyRecord = {
    keyHash: item.keyHash?.S ?? '',
    id: item.id?.S ?? '',
    name: item.name?.S ?? '',
    createdAt: item.createdAt?.S ?? '',
    revoked: item.revoked?.BOOL === true,
  };
  if (item.expiresAt?.N !== undefined) record.expiresAt = Number(item.expiresAt.N);
  if (item.models?.L !== undefined) record.models = item.models.L.map((value) => value.S ?? '');
  if (item.lastUsedAt?.S !== undefined) record.lastUsedAt = item.lastUsedAt.S;
  return record;
}
