import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CreateTableInput } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { KEY_TABLE } from '../../lambda/auth/key-table.ts';
import { bareDynamo, type DynamoApi } from '../../lambda/aws/dynamodb.ts';
import { IDENTITY_TABLE } from '../../lambda/identity/identity-table.ts';
import { STATS_TABLE } from '../../lambda/usage/stats-table.ts';
import { USAGE_TABLE } from '../../lambda/usage/usage-table.ts';
import { privateFolder, refuseStoreRequest, storeRequestAllowed } from './store-guard.ts';

/** Table names of the embedded store (a deployed stack names its own). */
export const LOCAL_KEY_TABLE = 'gateway-keys';
export const LOCAL_USAGE_TABLE = 'gateway-usage';

export interface EmbeddedStore {
  /**
   * Where the store answers, its per-run secret included as the path (store-guard.ts): whoever
   * holds this string may use the store, so it is never logged or shown.
   */
  endpoint: string;
  close(): Promise<void>;
}

/**
 * The DynamoDB API served in-process by dynalite on 127.0.0.1, persisted under `dataDir`
 * (in memory when undefined), answering only requests that carry this run's secret. The gateway
 * talks to it with the same DynamoDB client code it uses on AWS.
 */
export async function startEmbeddedStore(dataDir: string | undefined): Promise<EmbeddedStore> {
  const path = dataDir === undefined ? undefined : `${dataDir}/dynamodb`;
  if (path !== undefined) privateFolder(path);
  const server = dynalite({ path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const secret = randomBytes(32).toString('base64url');
  const settled = trackOperations(server, (req) => storeRequestAllowed(req, secret));
  return {
    endpoint: `http://127.0.0.1:${port}/${secret}`,
    // dynalite closes its database as soon as its HTTP server has closed (which happens by itself
    // once every client has hung up), and an operation still queued or applying then fails with
    // "Database is closed", thrown where nothing can catch it. So the operations under way finish
    // first (their clients may be gone), then the server closes with every socket at once.
    async close() {
      await settled(CLOSE_WAIT_MS);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** How long closing waits for operations under way (a usage flush is a few writes). */
const CLOSE_WAIT_MS = 5_000;

/**
 * Refuses requests `allowed` rejects, counts the store's operations from request to answer, and
 * keeps a client's hang-up from ending the process. dynalite rethrows a request's 'error' (a reset connection) from a listener it adds
 * in its request handler; that listener is replaced here. An operation whose request closed
 * before its body ended never starts; one that started ends when dynalite answers through
 * `res.end` (it does so also when the client has gone, so that call, not the socket's end, marks
 * the operation done).
 */
function trackOperations(server: Server, allowed: (req: IncomingMessage) => boolean): (timeoutMs: number) => Promise<void> {
  let running = 0;
  let idle: (() => void) | undefined;
  const serve = server.listeners('request')[0] as (req: IncomingMessage, res: ServerResponse) => void;
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!allowed(req)) return refuseStoreRequest(res);
    running++;
    let open = true;
    const finish = () => {
      if (!open) return;
      open = false;
      if (--running === 0) idle?.();
    };
    const end = res.end;
    res.end = function (this: ServerResponse, ...args: Parameters<ServerResponse['end']>) {
      finish();
      return end.apply(this, args);
    } as ServerResponse['end'];
    serve(req, res);
    req.removeAllListeners('error');
    req.on('error', () => res.destroy());
    // dynalite starts its work on the body's 'end'; a request closed before that never starts.
    let started = false;
    req.once('end', () => (started = true));
    req.once('close', () => {
      if (!started) finish();
    });
  });
  return (timeoutMs) =>
    new Promise<void>((resolve) => {
      if (running === 0) return resolve();
      const timer = setTimeout(resolve, timeoutMs);
      idle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
}

/** The embedded store checks no signature (its endpoint's secret is the check); these only make the requests well formed. */
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

/** The sign-in table (the config's `identity`), with the deployed stack's schema, unless it exists. */
export const LOCAL_IDENTITY_TABLE = 'gateway-identity';
export function ensureIdentityTable(client: DynamoApi, tableName = LOCAL_IDENTITY_TABLE): Promise<void> {
  return ensureKeyedTable(client, tableName, IDENTITY_TABLE);
}

/** The usage rollups' table (lambda/usage/stats-table.ts), with the deployed stack's schema, unless it exists. */
export const LOCAL_STATS_TABLE = 'gateway-stats';
export function ensureStatsTable(client: DynamoApi, tableName = LOCAL_STATS_TABLE): Promise<void> {
  return ensureKeyedTable(client, tableName, STATS_TABLE);
}

/** A table keyed by a string partition key and a string sort key, unless it exists. */
function ensureKeyedTable(client: DynamoApi, tableName: string, schema: { partitionKey: string; sortKey: string }): Promise<void> {
  const attributes = [schema.partitionKey, schema.sortKey];
  return createUnlessExists(client, {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: attributes.map((name) => ({ AttributeName: name, AttributeType: 'S' })),
    KeySchema: attributes.map((name, index) => ({ AttributeName: name, KeyType: index === 0 ? 'HASH' : 'RANGE' })),
  });
}

/**
 * Creates the table unless it exists, and returns once it serves. dynalite answers CreateTable
 * before the table takes requests (a read right after it can find no table), and the handler
 * reads the usage table as soon as it is imported: a first start on a new folder died of that.
 */
async function createUnlessExists(client: DynamoApi, input: CreateTableInput): Promise<void> {
  try {
    await client.call('CreateTable', input);
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ResourceInUseException')) throw error;
  }
  for (const until = Date.now() + TABLE_READY_MS; ; ) {
    try {
      await client.call('Scan', { TableName: input.TableName, Limit: 1, Select: 'COUNT' });
      return;
    } catch (error) {
      if (!(error instanceof Error && error.name === 'ResourceNotFoundException') || Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

/** How long a new table may take to serve (a few milliseconds in practice). */
const TABLE_READY_MS = 5_000;
