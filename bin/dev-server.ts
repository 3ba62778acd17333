import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { DynamoKeyStore } from '../lambda/auth/key-store.ts';
import { mintKey } from '../lambda/auth/issue-key.ts';
import { settingsFromEnv } from '../lambda/config/settings.ts';
import { installAwsLambdaGlobal } from './local/awslambda-shim.ts';
import { ensureIdentityTable, ensureKeyTable, ensureStatsTable, ensureUsageTable, localDynamo, LOCAL_IDENTITY_TABLE, LOCAL_KEY_TABLE, LOCAL_STATS_TABLE, LOCAL_USAGE_TABLE, startEmbeddedStore } from './local/embedded-store.ts';
import { deliverFirstKey } from './local/first-key.ts';
import { routingConfigForStart } from './local/routing-config.ts';
import { createFunctionUrlServer, LOCAL_SERVER_DEFAULTS, type StreamingHandler } from './local/function-url-server.ts';
import { ensureIdentitySecret } from './local/identity-secret.ts';
import { consoleLinkNotice, makeConsoleLink } from './local/console-link.ts';
import { claimForServer, listen, onStopRequest, StartRefused } from './local/process-life.ts';
import { setupText } from './local/setup-text.ts';
import { ConsoleSessions } from '../lambda/admin/console-sessions.ts';
import { AuditLog } from '../lambda/identity/store/audit.ts';
import { IdentityTable } from '../lambda/identity/store/table.ts';

/**
 * `npm start`: the gateway on this machine, no AWS account and no network needed. It runs the
 * Lambda entry module itself behind a local Function URL, with the key table served by an
 * embedded DynamoDB-compatible store under GATEWAY_DATA_DIR.
 */
const env = process.env;
const host = env.HOST || '127.0.0.1';
const port = Number(env.PORT ?? 8787);
const dataDir = resolve(env.GATEWAY_DATA_DIR || '.gateway');

/** A start that cannot go on says so in one line (no stack trace) and exits 1. */
function refuse(error: unknown): never {
  if (!(error instanceof StartRefused)) throw error;
  console.error(error.message);
  process.exit(1);
}

// The store's files, the data folder's records and the first key: the owner's only.
process.umask(0o077);
const { config, notice } = routingConfigForStart(env);
const claim = await claimForServer(dataDir).catch(refuse);
const store = await startEmbeddedStore(dataDir);
const dynamo = localDynamo(store.endpoint);
await ensureKeyTable(dynamo, LOCAL_KEY_TABLE);
await ensureUsageTable(dynamo, LOCAL_USAGE_TABLE);
await ensureStatsTable(dynamo, LOCAL_STATS_TABLE);
// The console's sessions and audit trail (and sign-in's items, with `identity`).
await ensureIdentityTable(dynamo);

// The tables are the embedded store's; the user's own AWS settings (credentials, region,
// profile) are left alone, for upstreams that sign with them.
Object.assign(env, {
  GATEWAY_CONFIG_JSON: JSON.stringify(config),
  GATEWAY_KEYS_TABLE: LOCAL_KEY_TABLE,
  GATEWAY_USAGE_TABLE: LOCAL_USAGE_TABLE,
  GATEWAY_STATS_TABLE: LOCAL_STATS_TABLE,
  GATEWAY_IDENTITY_TABLE: LOCAL_IDENTITY_TABLE,
  GATEWAY_LOCAL_STORE_ENDPOINT: store.endpoint,
  // A long-running server adds usage up and writes it every second (a kill -9 loses at most that).
  GATEWAY_USAGE_FLUSH_MS: env.GATEWAY_USAGE_FLUSH_MS ?? '1000',
});
delete env.GATEWAY_UPSTREAM_SECRET;
// Sign-in (the config's `identity`): its table in the same store, its secret in the data directory.
delete env.GATEWAY_IDENTITY_SECRET;
if (config.identity) {
  const secretEnv = config.identity.clientSecretEnv;
  if (secretEnv !== undefined && !env[secretEnv]) {
    console.error(`The config's identity.clientSecretEnv names ${secretEnv}: set it to the IdP client secret (or leave clientSecretEnv out for a public client).`);
    process.exit(1);
  }
  Object.assign(env, { GATEWAY_IDENTITY_SECRET_FILE: ensureIdentitySecret(dataDir) });
}
installAwsLambdaGlobal();
// Imported only now: the module reads the environment and middy tags it at evaluation time.
const { handler, flushUsage } = await import('../lambda/handler.ts');

const positive = (name: string, fallback: number): number => {
  const raw = env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`${name} must be a positive number, got "${raw}"`);
    process.exit(1);
  }
  return value;
};
const settings = settingsFromEnv(env);
const server = createFunctionUrlServer(handler as unknown as StreamingHandler, {
  maxBodyBytes: settings.maxBodyBytes,
  functionTimeoutMs: Number(env.GATEWAY_FUNCTION_TIMEOUT_SECONDS ?? 900) * 1000,
  headersTimeoutMs: positive('GATEWAY_HEADERS_TIMEOUT_MS', LOCAL_SERVER_DEFAULTS.headersTimeoutMs),
  requestTimeoutMs: positive('GATEWAY_REQUEST_TIMEOUT_MS', LOCAL_SERVER_DEFAULTS.requestTimeoutMs),
  bodyIdleTimeoutMs: positive('GATEWAY_BODY_IDLE_TIMEOUT_MS', LOCAL_SERVER_DEFAULTS.bodyIdleTimeoutMs),
  maxInflightBodyBytes: positive('GATEWAY_MAX_INFLIGHT_BODY_BYTES', LOCAL_SERVER_DEFAULTS.maxInflightBodyBytes),
  maxDecodedBodyBytes: positive('GATEWAY_MAX_DECODED_BODY_BYTES', settings.maxBodyBytes),
  maxUnauthenticatedConnections: positive('GATEWAY_MAX_UNAUTHENTICATED_CONNECTIONS', LOCAL_SERVER_DEFAULTS.maxUnauthenticatedConnections),
  clientStallTimeoutMs: positive('GATEWAY_CLIENT_STALL_TIMEOUT_MS', LOCAL_SERVER_DEFAULTS.clientStallTimeoutMs),
  log: (line) => process.stdout.write(`${line}\n`),
});
const shutdownGraceMs = positive('GATEWAY_SHUTDOWN_GRACE_MS', 10_000);
try {
  await listen(server, port, host);
} catch (error) {
  await store.close();
  claim.release();
  refuse(error);
}
const { port: actualPort } = server.address() as AddressInfo;
// The address clients dial, in the banner, the setup text and for the key CLI: a wildcard
// (HOST=0.0.0.0 or ::, all interfaces) is dialled on this machine as its loopback.
const dialled = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
const url = `http://${dialled.includes(':') ? `[${dialled}]` : dialled}:${actualPort}`;
// The key CLI reads this: the running store (its secret included) and the address for client setup.
claim.update({ url, store: store.endpoint, keyCacheSeconds: settings.keyCacheSeconds });

const keys = new DynamoKeyStore(LOCAL_KEY_TABLE, dynamo);
const existing = await keys.list();
console.log(`Gateway listening on ${url}${dialled === host ? '' : ` (and every other address of this machine: HOST=${host})`}`);
console.log(`  Messages:  ${url}/first/v1/messages   Responses: ${url}/second/v1/responses`);
console.log(`  ${notice}`);
console.log(`  Key store: ${dataDir}`);
if (config.identity) {
  const origin = config.identity.publicUrl ? new URL(config.identity.publicUrl).origin : url;
  console.log(`  Sign-in:   ${origin}/device with ${config.identity.issuer} (register the redirect URI ${origin}/oauth/callback there)`);
  console.log(`  Console:   ${origin}/admin (members of identity.adminGroups and viewerGroups; or a one-time link: npm run keys -- console-link)`);
} else {
  const identityTable = new IdentityTable(LOCAL_IDENTITY_TABLE, dynamo);
  const link = await makeConsoleLink(new ConsoleSessions(identityTable), new AuditLog(identityTable, () => {}), url, 'admin', 'npm start');
  console.log(consoleLinkNotice(process.stdout, dataDir, `${url}/admin`, link));
}
if (existing.length === 0) {
  const { key, record } = mintKey({ name: 'default' });
  await keys.put(record);
  console.log(deliverFirstKey(process.stdout, dataDir, record.id, `  ${key}\n\n${setupText(url, key)}`));
} else {
  console.log(`  ${existing.length} key(s) in the store. New key: npm run keys -- create --name NAME`);
}
console.log('\nReady. One JSON log line per request follows; Ctrl+C stops.');

/**
 * Stops taking requests and lets running ones finish for the grace period (streams still running
 * then end with their format's error event), writes all usage held in memory, closes the store,
 * gives the data folder up. A second signal skips the wait for running requests, never the usage
 * write.
 */
let stopping: Promise<void> | undefined;
function shutdown(reason: string, signal: boolean): void {
  if (stopping) {
    if (!signal) return;
    console.log(`${reason} again: ending running requests now.`);
    server.closeAllConnections();
    return;
  }
  console.log(`${reason}: finishing ${server.inFlight} running request(s) (up to ${shutdownGraceMs / 1000} s), then writing usage.`);
  stopping = (async () => {
    await server.drain(shutdownGraceMs);
    await flushUsage();
    await store.close();
    claim.release();
    process.exit(0);
  })();
}
onStopRequest(shutdown);
