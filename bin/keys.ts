import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ConsoleSessions } from '../lambda/admin/console-sessions.ts';
import { KeyOperationError, type KeyAudit } from '../lambda/auth/key-operations.ts';
import { DynamoKeyStore } from '../lambda/auth/key-store.ts';
import { AuditLog } from '../lambda/identity/store/audit.ts';
import { IdentityTable } from '../lambda/identity/store/table.ts';
import { makeConsoleLink } from './local/console-link.ts';
import { IdentityOperations } from '../lambda/identity/operators.ts';
import { DynamoUsageStore } from '../lambda/usage/usage-store.ts';
import { createKey, keyUsage, listKeys, revokeKey, rotateKey, updateKey, usageSummary, type Output } from './local/key-commands.ts';
import { LIMIT_FLAGS, parseDuration, parseExpiry, parseLimits, parseModels, parseSince, UsageError } from './local/key-options.ts';
import type { CapChanges } from '../lambda/identity/operators.ts';
import { readGatewayConfig } from './local/gateway-config.ts';
import { listPeople, parseCapChanges, personNamed, revokePerson, setPersonCaps, showPerson } from './local/people-commands.ts';
import { readDeployedGateway } from './local/stack-outputs.ts';
import { DEPLOYED_REVOCATION, openLocalStore, type OpenedStore } from './local/store-access.ts';
import { sdkDynamo } from './sdk-dynamo.ts';

const USAGE = `Manage the gateway's API keys, and the people who sign in.

  npm run keys -- create --name NAME [--owner EMAIL|SUB] [--role admin|viewer] [--models GLOB,GLOB] [--expires-in 30d] [limits] [--url URL] [--json]
  npm run keys -- list [--json]
  npm run keys -- update ID [--name NAME] [--models GLOB,GLOB|any] [--expires-in 30d|never] [limits] [--json]
  npm run keys -- rotate ID [--overlap 24h] [--url URL] [--json]
  npm run keys -- revoke ID
  npm run keys -- usage [ID] [--since 2026-11-01|7d] [--json]
  npm run keys -- people list [--json]
  npm run keys -- people revoke EMAIL|SUB [--json]
  npm run keys -- people show EMAIL|SUB [--config FILE] [--json]
  npm run keys -- people set-caps EMAIL|SUB [--daily USD|none|inherit] [--weekly ...] [--monthly ...] [--json]
  npm run keys -- console-link [--role admin|viewer] [--url URL] [--json]

Limits (with update, "none" removes one):
  --rpm N                requests per minute
  --tokens-per-day N     tokens (input, output, cache read and write) per UTC day
  --tokens-per-month N   tokens per UTC calendar month
  --max-tokens N         ceiling for max_tokens / max_output_tokens (larger requests are clamped)
  --usd-per-day USD      spend per UTC day in US dollars, priced per model (fractions allowed: 0.0001)
  --usd-per-month USD    spend per UTC calendar month in US dollars
  --max-in-flight N      model requests in progress at once (default for keys with a budget:
                         the gateway's GATEWAY_MAX_IN_FLIGHT_PER_KEY, 10)

Where the keys live:
  (default)                       the embedded store of npm start (GATEWAY_DATA_DIR, default .gateway)
  --data-dir DIR                  another embedded store
  --stack NAME [--region REGION]  a deployed gateway stack: its tables, and its address as the --url default
                                  (AWS credentials from the environment; reads the stack's outputs)
  --table NAME [--usage-table NAME] [--identity-table NAME] [--region REGION]
                                  DynamoDB tables named directly (AWS credentials from the environment)

--expires-in and --overlap take a number with a unit: s, m, h or d (e.g. 90d). rotate keeps the old key
working for --overlap (default 24h). usage without an ID summarises every key; --since defaults to the
first of this month.
--url is the gateway address used in the printed client setup (default: the stack's address with --stack,
else the address of the npm start running on the data folder, else http://HOST:PORT, 127.0.0.1:8787).
--owner ties the key to a person who has signed in (docs/sign-in.md): it acts for them, with their groups.
--role gives the key the admin API (docs/admin-api.md): admin may change keys and people, viewer only read.
console-link prints a one-time sign-in link to the console at <url>/admin (docs/console.md): it works
once, within 10 minutes, and signs its holder in with --role (default admin) for 12 hours.
people list shows who signed in (groups, last seen, sessions); people revoke ends all their sessions at once
and revokes the keys tied to them. people show gives a person's effective models and caps (and where each
comes from) and their spend today, this week and this month; it reads the gateway config from --config,
GATEWAY_CONFIG or ./cdk.json. people set-caps sets their own caps (USD per UTC day, week from Monday, month):
none = no cap, inherit = their groups' or the default cap again; every change is an audit event.`;

function parse() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        models: { type: 'string' },
        'expires-in': { type: 'string' },
        overlap: { type: 'string' },
        since: { type: 'string' },
        rpm: { type: 'string' },
        'tokens-per-day': { type: 'string' },
        'tokens-per-month': { type: 'string' },
        'max-tokens': { type: 'string' },
        'usd-per-day': { type: 'string' },
        'usd-per-month': { type: 'string' },
        'max-in-flight': { type: 'string' },
        url: { type: 'string' },
        json: { type: 'boolean', default: false },
        table: { type: 'string' },
        'usage-table': { type: 'string' },
        'identity-table': { type: 'string' },
        owner: { type: 'string' },
        role: { type: 'string' },
        stack: { type: 'string' },
        region: { type: 'string' },
        'data-dir': { type: 'string' },
        config: { type: 'string' },
        daily: { type: 'string' },
        weekly: { type: 'string' },
        monthly: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

async function openStore(values: ReturnType<typeof parse>['values']): Promise<OpenedStore> {
  if (values.table !== undefined && values.stack !== undefined) throw new UsageError('Use --table or --stack, not both');
  let table = values.table;
  let usageTable = values['usage-table'];
  let identityTable = values['identity-table'];
  if (values.stack !== undefined) {
    const deployed = await readDeployedGateway(values.stack, { region: values.region });
    table = deployed.keyTableName;
    usageTable = deployed.usageTableName;
    identityTable = deployed.identityTableName;
    // The printed client setup should point at the deployed gateway, not at localhost.
    values.url ??= deployed.gatewayUrl;
  }
  if (table !== undefined) {
    const client = new DynamoDBClient(values.region === undefined ? {} : { region: values.region });
    const dynamo = sdkDynamo(client);
    const usage = usageTable === undefined ? undefined : new DynamoUsageStore(usageTable, dynamo);
    const identity = async () => {
      if (identityTable === undefined) throw new UsageError('This needs the identity table (sign-in): --stack NAME of a stack with sign-in, or --identity-table NAME with --table');
      return new IdentityOperations(identityTable, dynamo);
    };
    const consoleTable = async () => {
      if (identityTable === undefined) throw new UsageError('Console sessions live in the identity table: --stack NAME of a stack with one, or --identity-table NAME with --table');
      return new IdentityTable(identityTable, dynamo);
    };
    return { store: new DynamoKeyStore(table, dynamo), usage, identity, consoleTable, revocation: DEPLOYED_REVOCATION, close: async () => client.destroy() };
  }
  return openLocalStore(resolve(values['data-dir'] ?? process.env.GATEWAY_DATA_DIR ?? '.gateway'));
}

const COMMANDS = ['create', 'list', 'update', 'rotate', 'revoke', 'usage', 'people', 'console-link'];
const ROLES = ['admin', 'viewer'] as const;
/** Commands that change keys: what they are audited as. */
const KEY_CHANGES = new Set(['create', 'update', 'rotate', 'revoke']);
const PEOPLE_COMMANDS = ['list', 'revoke', 'show', 'set-caps'];

async function main(): Promise<void> {
  const { positionals, values } = parse();
  const [command, id, person] = positionals;
  if (values.help || command === undefined) return void console.log(USAGE);
  if (!COMMANDS.includes(command)) throw new UsageError(`Unknown command "${command}"`);
  if (command === 'people' && !PEOPLE_COMMANDS.includes(id ?? '')) throw new UsageError(`people takes ${PEOPLE_COMMANDS.join(', ')}`);
  const capFlags = { daily: values.daily, weekly: values.weekly, monthly: values.monthly };
  const capChanges = command === 'people' && id === 'set-caps' ? parseCapChanges(capFlags) : undefined;
  if (capChanges === undefined && Object.values(capFlags).some((value) => value !== undefined)) throw new UsageError('--daily, --weekly and --monthly go with people set-caps');
  const config = command === 'people' && id === 'show' ? readGatewayConfig(values.config, process.env) : undefined;
  if (values.owner !== undefined && command !== 'create') throw new UsageError('--owner goes with create');
  if (values.role !== undefined && command !== 'create' && command !== 'console-link') throw new UsageError('--role goes with create or console-link');
  if (values.role !== undefined && !(ROLES as readonly string[]).includes(values.role)) throw new UsageError(`--role must be admin or viewer; got "${values.role}"`);
  if (['update', 'rotate', 'revoke'].includes(command) && !id) throw new UsageError(`${command} needs the key id (see keys list)`);
  const role = values.role as (typeof ROLES)[number] | undefined;
  // Validate everything before touching a store.
  const limitValues = Object.fromEntries(Object.keys(LIMIT_FLAGS).map((flag) => [flag, values[flag as keyof typeof LIMIT_FLAGS]]));
  const limits = parseLimits(limitValues, command === 'update');
  const models = parseModels(values.models, command === 'update');
  const expiresAt = parseExpiry(values['expires-in'], command === 'update');
  const overlap = parseDuration('--overlap', values.overlap ?? '24h');
  const since = parseSince(values.since);
  if (command === 'create' && !values.name) throw new UsageError('create needs --name NAME');

  const opened = await openStore(values);
  const out: Output = { json: values.json, print: (text) => console.log(text) };
  // The address a running npm start recorded is the one clients can use; else what npm start would take.
  const url = values.url ?? opened.gatewayUrl ?? `http://${process.env.HOST || '127.0.0.1'}:${process.env.PORT || 8787}`;
  try {
    const { store, usage } = opened;
    const audit = KEY_CHANGES.has(command) ? await cliAudit(opened, `keys ${command}`) : undefined;
    if (command === 'create') {
      const owner = values.owner === undefined ? undefined : (await personNamed(await opened.identity(), values.owner, '--owner')).sub;
      await createKey(store, { name: values.name as string, ...(models ? { models } : {}), ...(expiresAt ? { expiresAt } : {}), ...(owner ? { owner } : {}), ...(role ? { role } : {}), limits: limits.set, url }, out, audit);
    } else if (command === 'console-link') {
      const table = await opened.consoleTable();
      const link = await makeConsoleLink(new ConsoleSessions(table), new AuditLog(table, () => {}), url, role ?? 'admin', 'keys console-link');
      out.print(out.json ? JSON.stringify({ ...link, role: role ?? 'admin' }) : `Open this link within 10 minutes to sign in to the console as ${role ?? 'admin'} (it works once):\n\n  ${link.url}\n`);
    } else if (command === 'people') {
      if (id === 'list') await listPeople(await opened.identity(), out);
      else if (id === 'show') await showPerson(await opened.identity(), usage, config?.identity, person, out);
      else if (id === 'set-caps') await setPersonCaps(await opened.identity(), person, capChanges as CapChanges, out);
      else await revokePerson(await opened.identity(), store, person, out);
    } else if (command === 'list') await listKeys(store, out);
    else if (command === 'update') await updateKey(store, id, { name: values.name, models, expiresAt, limits }, out, audit);
    else if (command === 'rotate') await rotateKey(store, id, overlap, url, out, audit);
    else if (command === 'revoke') await revokeKey(store, id, out, opened.revocation, audit);
    else {
      if (!usage) throw new UsageError('usage needs the usage table: --stack NAME, or --usage-table NAME with --table');
      if (id === undefined) await usageSummary(store, usage, since, out);
      else await keyUsage(store, usage, id, since, out);
    }
  } finally {
    await opened.close();
  }
}

/**
 * Key changes are audit events (the console shows them beside its own) when the store has an
 * identity table: always locally, on a stack with sign-in. Otherwise they are not recorded.
 */
async function cliAudit(opened: OpenedStore, via: string): Promise<KeyAudit | undefined> {
  const table = await opened.consoleTable().catch(() => undefined);
  if (!table) return undefined;
  const log = new AuditLog(table, () => {});
  return (type, key, detail) => log.record({ type, key, detail, actor: 'operator (key CLI)', via }, Date.now());
}


// The embedded store's files (LevelDB creates them as it goes) and the data folder's records: the owner's only.
process.umask(0o077);
try {
  await main();
} catch (error) {
  const usage = error instanceof UsageError || error instanceof KeyOperationError;
  console.error(usage ? `${(error as Error).message}\n\n${USAGE}` : `keys: ${(error as Error).message}`);
  process.exitCode = usage ? 2 : 1;
}
