import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoKeyStore } from '../lambda/auth/key-store.ts';
import { mintKey } from '../lambda/auth/issue-key.ts';
import type { KeyRecord } from '../lambda/auth/key-table.ts';
import { clientSetup, setupText } from './local/setup-text.ts';
import { readDeployedGateway } from './local/stack-outputs.ts';
import { openLocalStore, type OpenedStore } from './local/store-access.ts';

const USAGE = `Manage the gateway's API keys.

  npm run keys -- create --name NAME [--models GLOB,GLOB] [--expires-in 30d] [--url URL] [--json]
  npm run keys -- list [--json]
  npm run keys -- revoke ID

Where the keys live:
  (default)                       the embedded store of npm start (GATEWAY_DATA_DIR, default .gateway)
  --data-dir DIR                  another embedded store
  --stack NAME [--region REGION]  a deployed gateway stack: its key table, and its address as the --url default
                                  (AWS credentials from the environment; reads the stack's outputs)
  --table NAME [--region REGION]  a DynamoDB table named directly (AWS credentials from the environment)

--expires-in takes a number with a unit: s, m, h or d (e.g. 90d).
--url is the gateway address used in the printed client setup (default: the stack's address with --stack,
else http://127.0.0.1:8787).`;

class UsageError extends Error {}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    name: { type: 'string' },
    models: { type: 'string' },
    'expires-in': { type: 'string' },
    url: { type: 'string' },
    json: { type: 'boolean', default: false },
    table: { type: 'string' },
    stack: { type: 'string' },
    region: { type: 'string' },
    'data-dir': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

async function openStore(): Promise<OpenedStore> {
  if (values.table !== undefined && values.stack !== undefined) throw new UsageError('Use --table or --stack, not both');
  let table = values.table;
  if (values.stack !== undefined) {
    const deployed = await readDeployedGateway(values.stack, { region: values.region });
    table = deployed.keyTableName;
    // The printed client setup should point at the deployed gateway, not at localhost.
    values.url ??= deployed.gatewayUrl;
  }
  if (table !== undefined) {
    const client = new DynamoDBClient(values.region === undefined ? {} : { region: values.region });
    return { store: new DynamoKeyStore(table, client), close: async () => client.destroy() };
  }
  return openLocalStore(resolve(values['data-dir'] ?? process.env.GATEWAY_DATA_DIR ?? '.gateway'));
}

/** `30d` -> epoch seconds 30 days from now. */
export function parseExpiresIn(text: string, now = Date.now()): number {
  const match = /^(\d+)([smhd])$/.exec(text.trim());
  if (!match) throw new UsageError(`--expires-in must be a number and a unit (s, m, h, d), like 30d; got "${text}"`);
  const seconds = Number(match[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[match[2] as 's' | 'm' | 'h' | 'd'];
  if (seconds === 0) throw new UsageError('--expires-in must be more than zero');
  return Math.floor(now / 1000) + seconds;
}

function parseModels(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const globs = text.split(',').map((glob) => glob.trim()).filter((glob) => glob.length > 0);
  if (globs.length === 0) throw new UsageError('--models needs at least one model name or glob');
  return globs;
}

/** What `list` shows: everything but the digest, which is of no use to an operator. */
function publicView(record: KeyRecord) {
  const { keyHash: _digest, ...rest } = record;
  return { ...rest, expiresAt: record.expiresAt === undefined ? undefined : new Date(record.expiresAt * 1000).toISOString() };
}

async function create(store: DynamoKeyStore): Promise<void> {
  if (!values.name) throw new UsageError('create needs --name NAME');
  const expiresAt = values['expires-in'] === undefined ? undefined : parseExpiresIn(values['expires-in']);
  const { key, record } = mintKey({ name: values.name, models: parseModels(values.models), expiresAt });
  await store.put(record);
  const url = values.url ?? `http://${process.env.HOST || '127.0.0.1'}:${process.env.PORT || 8787}`;
  if (values.json) {
    console.log(JSON.stringify({ ...publicView(record), key, setup: clientSetup(url, key) }));
    return;
  }
  console.log(`Created key ${record.id} (${record.name}). It is shown only this once:\n\n  ${key}\n`);
  console.log(setupText(url, key));
}

async function list(store: DynamoKeyStore): Promise<void> {
  const records = (await store.list()).map(publicView);
  if (values.json) {
    console.log(JSON.stringify(records));
    return;
  }
  if (records.length === 0) console.log('No keys.');
  for (const record of records) {
    const state = record.revoked ? 'revoked' : record.expiresAt !== undefined && Date.parse(record.expiresAt) <= Date.now() ? 'expired' : 'active';
    const models = record.models === undefined ? 'any model' : record.models.join(',');
    console.log(`${record.id}  ${state.padEnd(7)}  ${record.name}  (${models}; created ${record.createdAt}; last used ${record.lastUsedAt ?? 'never'})`);
  }
}

async function revoke(store: DynamoKeyStore, id: string | undefined): Promise<void> {
  if (!id) throw new UsageError('revoke needs the key id (see keys list)');
  const record = await store.findById(id);
  if (!record || !(await store.revoke(record.keyHash))) throw new UsageError(`No key with id ${id}`);
  console.log(values.json ? JSON.stringify({ id, revoked: true }) : `Revoked ${id}.`);
}

async function main(): Promise<void> {
  const [command, ...rest] = positionals;
  if (values.help || command === undefined) {
    console.log(USAGE);
    return;
  }
  if (!['create', 'list', 'revoke'].includes(command)) throw new UsageError(`Unknown command "${command}"`);
  const opened = await openStore();
  try {
    if (command === 'create') await create(opened.store);
    else if (command === 'list') await list(opened.store);
    else await revoke(opened.store, rest[0]);
  } finally {
    await opened.close();
  }
}

try {
  await main();
} catch (error) {
  console.error(error instanceof UsageError ? `${error.message}\n\n${USAGE}` : `keys: ${(error as Error).message}`);
  process.exitCode = error instanceof UsageError ? 2 : 1;
}
