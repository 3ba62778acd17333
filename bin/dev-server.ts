import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { DynamoKeyStore } from '../lambda/auth/key-store.ts';
import { mintKey } from '../lambda/auth/issue-key.ts';
import { parseRoutingConfig, type RoutingConfig } from '../lambda/config/routing.ts';
import { settingsFromEnv } from '../lambda/config/settings.ts';
import { installAwsLambdaGlobal } from './local/awslambda-shim.ts';
import { defaultRoutingConfig } from './local/default-config.ts';
import { ensureKeyTable, ensureUsageTable, localDynamoClient, LOCAL_KEY_TABLE, LOCAL_USAGE_TABLE, startEmbeddedStore } from './local/embedded-store.ts';
import { createFunctionUrlServer, type StreamingHandler } from './local/function-url-server.ts';
import { setupText } from './local/setup-text.ts';
import { removeStoreMarker, writeStoreMarker } from './local/store-access.ts';

/**
 * `npm start`: the gateway on this machine, no AWS account and no network needed. It runs the
 * Lambda entry module itself behind a local Function URL, with the key table served by an
 * embedded DynamoDB-compatible store under GATEWAY_DATA_DIR.
 */
const env = process.env;
const host = env.HOST || '127.0.0.1';
const port = Number(env.PORT ?? 8787);
const dataDir = resolve(env.GATEWAY_DATA_DIR || '.gateway');

function loadConfig(): { config: RoutingConfig; notice: string } {
  if (!env.GATEWAY_CONFIG) return defaultRoutingConfig(env);
  const path = resolve(env.GATEWAY_CONFIG);
  try {
    return { config: parseRoutingConfig(JSON.parse(readFileSync(path, 'utf8'))), notice: `Routing config: ${path}` };
  } catch (error) {
    console.error(`Cannot use GATEWAY_CONFIG=${path}: ${(error as Error).message}`);
    process.exit(1);
  }
}

const { config, notice } = loadConfig();
const store = await startEmbeddedStore(dataDir);
const dynamo = localDynamoClient(store.endpoint);
await ensureKeyTable(dynamo, LOCAL_KEY_TABLE);
await ensureUsageTable(dynamo, LOCAL_USAGE_TABLE);

Object.assign(env, {
  GATEWAY_CONFIG_JSON: JSON.stringify(config),
  GATEWAY_KEYS_TABLE: LOCAL_KEY_TABLE,
  GATEWAY_USAGE_TABLE: LOCAL_USAGE_TABLE,
  AWS_ENDPOINT_URL_DYNAMODB: store.endpoint,
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
  AWS_EC2_METADATA_DISABLED: 'true',
});
delete env.GATEWAY_UPSTREAM_SECRET;
installAwsLambdaGlobal();
// Imported only now: the module reads the environment and middy tags it at evaluation time.
const { handler } = await import('../lambda/handler.ts');

const server = createFunctionUrlServer(handler as unknown as StreamingHandler, {
  maxBodyBytes: settingsFromEnv(env).maxBodyBytes,
  functionTimeoutMs: Number(env.GATEWAY_FUNCTION_TIMEOUT_SECONDS ?? 900) * 1000,
});
await new Promise<void>((done) => server.listen(port, host, done));
const { port: actualPort } = server.address() as AddressInfo;
const url = `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`;
writeStoreMarker(dataDir, store.endpoint);

const keys = new DynamoKeyStore(LOCAL_KEY_TABLE, dynamo);
const existing = await keys.list();
console.log(`Gateway listening on ${url}`);
console.log(`  Messages:  ${url}/first/v1/messages   Responses: ${url}/second/v1/responses`);
console.log(`  ${notice}`);
console.log(`  Key store: ${dataDir}`);
if (existing.length === 0) {
  const { key, record } = mintKey({ name: 'default' });
  await keys.put(record);
  console.log(`\nCreated a first API key (${record.id}); it is shown only this once:\n\n  ${key}\n`);
  console.log(setupText(url, key));
} else {
  console.log(`  ${existing.length} key(s) in the store. New key: npm run keys -- create --name NAME`);
}
console.log('\nReady. One JSON log line per request follows; Ctrl+C stops.');

/** Stops taking requests, lets running ones finish (their usage is written after the response), then closes the store. */
function shutdown(): void {
  removeStoreMarker(dataDir);
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const force = setTimeout(() => server.closeAllConnections(), 5_000);
  void stopped.then(async () => {
    clearTimeout(force);
    await store.close();
    process.exit(0);
  });
}
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
