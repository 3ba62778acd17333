import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoKeyStore } from '../../lambda/auth/key-store.ts';
import type { DynamoApi } from '../../lambda/aws/dynamodb.ts';
import { IdentityOperations } from '../../lambda/identity/operators.ts';
import { IdentityTable } from '../../lambda/identity/store/table.ts';
import { DynamoUsageStore } from '../../lambda/usage/usage-store.ts';
import { ensureIdentityTable, ensureKeyTable, ensureUsageTable, localDynamo, LOCAL_IDENTITY_TABLE, LOCAL_KEY_TABLE, LOCAL_USAGE_TABLE, startEmbeddedStore } from './embedded-store.ts';

/**
 * The embedded store's database can be open in one process only (LevelDB locks it), so a
 * running `npm start` leaves a marker with its endpoint and the key CLI talks to that.
 */
const MARKER = 'store-endpoint.json';

export interface OpenedStore {
  store: DynamoKeyStore;
  /** Absent when the deployment has no usage table. */
  usage: DynamoUsageStore | undefined;
  /** The people who signed in (sign-in, docs/sign-in.md); throws a usage error when the deployment has no identity table. */
  identity(): Promise<IdentityOperations>;
  /** The identity table as the console uses it (sessions, one-time links, the audit trail); throws a usage error when the deployment has none. */
  consoleTable(): Promise<IdentityTable>;
  close(): Promise<void>;
}

/** The embedded store's identity table, created on first use (a data folder npm start has not opened yet has none). */
function localIdentity(client: DynamoApi): () => Promise<IdentityOperations> {
  let opened: Promise<IdentityOperations> | undefined;
  return () => (opened ??= ensureIdentityTable(client).then(() => new IdentityOperations(LOCAL_IDENTITY_TABLE, client)));
}

function localConsoleTable(client: DynamoApi): () => Promise<IdentityTable> {
  return async () => {
    await ensureIdentityTable(client);
    return new IdentityTable(LOCAL_IDENTITY_TABLE, client);
  };
}

export function writeStoreMarker(dataDir: string, endpoint: string): void {
  writeFileSync(join(dataDir, MARKER), JSON.stringify({ endpoint, pid: process.pid }));
}

export function removeStoreMarker(dataDir: string): void {
  rmSync(join(dataDir, MARKER), { force: true });
}

/** The running server's store if there is one, else the data directory opened here. */
export async function openLocalStore(dataDir: string): Promise<OpenedStore> {
  const running = await runningEndpoint(dataDir);
  if (running !== undefined) {
    const client = localDynamo(running);
    return { store: new DynamoKeyStore(LOCAL_KEY_TABLE, client), usage: new DynamoUsageStore(LOCAL_USAGE_TABLE, client), identity: localIdentity(client), consoleTable: localConsoleTable(client), close: async () => {} };
  }
  const embedded = await startEmbeddedStore(dataDir);
  const client = localDynamo(embedded.endpoint);
  await ensureKeyTable(client, LOCAL_KEY_TABLE);
  await ensureUsageTable(client, LOCAL_USAGE_TABLE);
  return {
    store: new DynamoKeyStore(LOCAL_KEY_TABLE, client),
    usage: new DynamoUsageStore(LOCAL_USAGE_TABLE, client),
    identity: localIdentity(client),
    consoleTable: localConsoleTable(client),
    close: async () => {
      await embedded.close();
    },
  };
}

async function runningEndpoint(dataDir: string): Promise<string | undefined> {
  let marker: { endpoint?: unknown; pid?: unknown };
  try {
    marker = JSON.parse(readFileSync(join(dataDir, MARKER), 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof marker.endpoint !== 'string' || typeof marker.pid !== 'number') return undefined;
  try {
    process.kill(marker.pid, 0);
  } catch {
    return undefined;
  }
  const client = localDynamo(marker.endpoint);
  try {
    await client.call('Scan', { TableName: LOCAL_KEY_TABLE, Limit: 1, Select: 'COUNT' });
    return marker.endpoint;
  } catch {
    return undefined;
  }
}
