import { DynamoKeyStore } from '../../lambda/auth/key-store.ts';
import type { DynamoApi } from '../../lambda/aws/dynamodb.ts';
import { DEFAULT_SETTINGS } from '../../lambda/config/settings.ts';
import { IdentityOperations } from '../../lambda/identity/operators.ts';
import { IdentityTable } from '../../lambda/identity/store/table.ts';
import { DynamoUsageStore } from '../../lambda/usage/usage-store.ts';
import { claimDataFolder, dataFolderHolder, describeHolder, type Holder } from './data-folder.ts';
import { ensureIdentityTable, ensureKeyTable, ensureUsageTable, localDynamo, LOCAL_IDENTITY_TABLE, LOCAL_KEY_TABLE, LOCAL_USAGE_TABLE, startEmbeddedStore } from './embedded-store.ts';

export interface OpenedStore {
  store: DynamoKeyStore;
  /** Absent when the deployment has no usage table. */
  usage: DynamoUsageStore | undefined;
  /** The address of the gateway serving these keys, when the store knows it (a running npm start). */
  gatewayUrl?: string;
  /** When a revocation reaches the gateway: one sentence for the CLI's answer. */
  revocation: { seconds: number; text: string };
  /** The people who signed in (sign-in, docs/sign-in.md); throws a usage error when the deployment has no identity table. */
  identity(): Promise<IdentityOperations>;
  /** The identity table as the console uses it (sessions, one-time links, the audit trail); throws a usage error when the deployment has none. */
  consoleTable(): Promise<IdentityTable>;
  close(): Promise<void>;
}

/** The embedded store's identity table, created on first use (npm start creates it only with `identity` configured). */
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

/** What a deployed gateway does with a revoked key: its instances trust a looked-up key for the cache time. */
export const DEPLOYED_REVOCATION = {
  seconds: DEFAULT_SETTINGS.keyCacheSeconds,
  text: `Gateway instances that looked the key up recently accept it for up to ${DEFAULT_SETTINGS.keyCacheSeconds} s more (GATEWAY_KEY_CACHE_SECONDS, if the stack changed it).`,
};

/** How long the CLI waits for a data folder another process is about to release (a key command, a gateway starting or stopping). */
const WAIT_MS = 5_000;

/**
 * The embedded store of a data folder: the running gateway's (the LevelDB database can be open
 * in one process only), or, when none runs, the folder's own, opened here for this command.
 */
export async function openLocalStore(dataDir: string): Promise<OpenedStore> {
  const until = Date.now() + WAIT_MS;
  for (;;) {
    const holder = dataFolderHolder(dataDir);
    if (holder?.role === 'server' && holder.store !== undefined && (await answers(holder.store))) return runningStore(holder);
    if (holder === undefined) {
      const claimed = claimDataFolder(dataDir, 'keys');
      if ('claim' in claimed) return ownStore(dataDir, claimed.claim.release);
    }
    if (Date.now() > until) {
      const holderNow = dataFolderHolder(dataDir);
      throw new Error(`the data folder ${dataDir} is in use by ${holderNow ? describeHolder(holderNow) : 'another process'}, and it did not become free within ${WAIT_MS / 1000} s; try again.`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function runningStore(holder: Holder): OpenedStore {
  const client = localDynamo(holder.store as string);
  const seconds = holder.keyCacheSeconds ?? DEFAULT_SETTINGS.keyCacheSeconds;
  return {
    store: new DynamoKeyStore(LOCAL_KEY_TABLE, client),
    usage: new DynamoUsageStore(LOCAL_USAGE_TABLE, client),
    identity: localIdentity(client),
    consoleTable: localConsoleTable(client),
    ...(holder.url ? { gatewayUrl: holder.url } : {}),
    revocation: {
      seconds,
      text: seconds > 0 ? `The running gateway (pid ${holder.pid}) accepts it for up to ${seconds} s more if it looked it up recently (its key cache, GATEWAY_KEY_CACHE_SECONDS).` : 'The running gateway refuses it from now on.',
    },
    close: async () => {},
  };
}

async function ownStore(dataDir: string, release: () => void): Promise<OpenedStore> {
  try {
    const embedded = await startEmbeddedStore(dataDir);
    const client = localDynamo(embedded.endpoint);
    await ensureKeyTable(client, LOCAL_KEY_TABLE);
    await ensureUsageTable(client, LOCAL_USAGE_TABLE);
    return {
      store: new DynamoKeyStore(LOCAL_KEY_TABLE, client),
      usage: new DynamoUsageStore(LOCAL_USAGE_TABLE, client),
      identity: localIdentity(client),
      consoleTable: localConsoleTable(client),
      revocation: { seconds: 0, text: 'No gateway runs on this data folder now: the next one to start refuses it.' },
      close: async () => {
        await embedded.close();
        release();
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}

async function answers(endpoint: string): Promise<boolean> {
  try {
    await localDynamo(endpoint).call('Scan', { TableName: LOCAL_KEY_TABLE, Limit: 1, Select: 'COUNT' });
    return true;
  } catch {
    return false;
  }
}
