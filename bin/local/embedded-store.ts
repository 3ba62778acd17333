import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { CreateTableInput } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { KEY_TABLE } from '../../lambda/auth/key-table.ts';
import { bareDynamo, type DynamoApi } from '../../lambda/aws/dynamodb.ts';
import { USAGE_TABLE } from '../../lambda/usage/usage-table.ts';

/** Table names of the embedded store (a deployed stack names its own). */
export const LOCAL_KEY_TABLE = 'gateway-keys';
export const LOCAL_USAGE_TABLE = 'gateway-usage';

export interface EmbeddedStore {
  endpoint: string;
  close(): Promise<void>;
}

/**
 * The DynamoDB API served in-process by dynalite on 127.0.0.1, persisted under `dataDir`
 * (in memory when undefined). The gateway talks to it with the same DynamoDB client code it
 * uses on AWS.
 */
export async function startEmbeddedStore(dataDir: string | undefined): Promise<EmbeddedStore> {
  if (dataDir !== undefined) mkdirSync(dataDir, { recursive: true });
  const server = dynalite({ path: dataDir === undefined ? undefined : `${dataDir}/dynamodb`, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Clients keep idle keep-alive sockets open; do not wait for them to time out.
        server.closeAllConnections();
      }),
  };
}

/** The embedded store checks no signature; these only make the requests well formed. */
export const LOCAL_CREDENTIALS = async () => ({ accessKeyId: 'local', secretAccessKey: 'local' });

/** DynamoDB at a loopback store, through the same client the Lambda uses: fixed region, placeholder credentials. */
export function localDynamo(endpoint: string): DynamoApi {
  return bareDynamo({ endpoint, region: 'local', credentials: LOCAL_CREDENTIALS });
}

/** Creates the key table with the deployed stack's schema, unless it exists. */
export function ensureKeyTable(client: DynamoApi, tableName: string): Promise<void> {
  return createUnlessExists(client, {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: KEY_TABLE.partitionKey, AttributeType: 'S' },
      { AttributeName: KEY_TABLE.idAttribute, AttributeType: 'S' },
    ],
    KeySchema: [{ AttributeName: KEY_TABLE.partitionKey, KeyType: 'HASH' }],
    GlobalSecondaryIndexes: [
      {
        IndexName: KEY_TABLE.idIndex,
        KeySchema: [{ AttributeName: KEY_TABLE.idAttribute, KeyType: 'HASH' }],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ],
  });
}

/** Creates the usage table with the deployed stack's schema, unless it exists. */
export function ensureUsageTable(client: DynamoApi, tableName: string): Promise<void> {
  return createUnlessExists(client, {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: USAGE_TABLE.partitionKey, AttributeType: 'S' },
      { AttributeName: USAGE_TABLE.sortKey, AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: USAGE_TABLE.partitionKey, KeyType: 'HASH' },
      { AttributeName: USAGE_TABLE.sortKey, KeyType: 'RANGE' },
    ],
  });
}

async function createUnlessExists(client: DynamoApi, input: CreateTableInput): Promise<void> {
  try {
    await client.call('CreateTable', input);
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ResourceInUseException')) throw error;
  }
}
