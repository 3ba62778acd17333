import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { pathToFileURL } from 'node:url';
import { installAwsLambdaGlobal } from '../bin/local/awslambda-shim.ts';
import { ensureKeyTable, ensureStatsTable, ensureUsageTable, localDynamo, startEmbeddedStore } from '../bin/local/embedded-store.ts';
import { createFunctionUrlServer, type StreamingHandler } from '../bin/local/function-url-server.ts';
import { mintKey } from '../lambda/auth/issue-key.ts';
import { DynamoKeyStore } from '../lambda/auth/key-store.ts';
import { settingsFromEnv } from '../lambda/config/settings.ts';
import { serveParent, type ParentMessage } from './child-ipc.ts';
import { benchRoutingConfig } from './workloads.ts';

/**
 * The gateway under test, as its own process: the production bundle of lambda/handler.ts behind
 * the local Function URL emulation with `npm start`'s settings, its key and usage tables in an
 * in-memory dynalite (as bin/local/embedded-store.ts serves it). Metering is on as shipped: every
 * request's usage is added up (and folded into the usage rollups) and written every second
 * (GATEWAY_USAGE_FLUSH_MS, like npm start; 0 measures Lambda's write-through instead). Only the wiring is here; the request path is the
 * bundle's. Env: BENCH_BUNDLE (the .mjs to load), BENCH_STUB_URL (the upstream).
 */
const bundle = process.env.BENCH_BUNDLE;
const stubUrl = process.env.BENCH_STUB_URL;
if (!bundle || !stubUrl) throw new Error('BENCH_BUNDLE and BENCH_STUB_URL must be set');

const TABLE = 'bench-keys';
const USAGE_TABLE = 'bench-usage';
const STATS_TABLE = 'bench-stats';
const store = await startEmbeddedStore(undefined);
const dynamo = localDynamo(store.endpoint);
await ensureKeyTable(dynamo, TABLE);
await ensureUsageTable(dynamo, USAGE_TABLE);
await ensureStatsTable(dynamo, STATS_TABLE);
const { key, record } = mintKey({ name: 'bench' });
await new DynamoKeyStore(TABLE, dynamo).put(record);

Object.assign(process.env, {
  GATEWAY_CONFIG_JSON: JSON.stringify(benchRoutingConfig(stubUrl)),
  GATEWAY_KEYS_TABLE: TABLE,
  GATEWAY_USAGE_TABLE: USAGE_TABLE,
  // BENCH_ROLLUPS=off leaves the usage rollups out, to measure what they cost.
  ...(process.env.BENCH_ROLLUPS === 'off' ? {} : { GATEWAY_STATS_TABLE: STATS_TABLE }),
  GATEWAY_LOCAL_STORE_ENDPOINT: store.endpoint,
  GATEWAY_USAGE_FLUSH_MS: process.env.GATEWAY_USAGE_FLUSH_MS ?? '1000',
  // The request log line is off: its cost is stdout, which would measure the terminal.
  GATEWAY_LOG: 'off',
  AWS_EC2_METADATA_DISABLED: 'true',
});
delete process.env.GATEWAY_UPSTREAM_SECRET;
installAwsLambdaGlobal();
// Imported only now: the bundle reads the environment and tags the handler at evaluation time.
const { handler, flushUsage } = (await import(pathToFileURL(bundle).href)) as { handler: StreamingHandler; flushUsage: () => Promise<void> };

const server = createFunctionUrlServer(handler, {
  maxBodyBytes: settingsFromEnv(process.env).maxBodyBytes,
  functionTimeoutMs: 900_000,
});

/** Writes what the recorder holds, then counts the metered requests (day items only). */
async function meteredRequests(): Promise<number> {
  await flushUsage();
  let requests = 0;
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamo.call('Scan', { TableName: USAGE_TABLE, ...(start ? { ExclusiveStartKey: start } : {}) });
    for (const item of page.Items ?? []) if (item.period?.S?.startsWith('DAY#')) requests += Number(item.requests?.N ?? 0);
    start = page.LastEvaluatedKey;
  } while (start);
  return requests;
}
// The 1,000-stream phase opens connections in bursts; a short backlog would drop SYNs.
server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ type: 'ready', url: `http://127.0.0.1:${port}`, key, bundle });
});

let profiler: Session | undefined;

/** CPU profiling on request, so a profile covers exactly one load window. */
async function profile(message: ParentMessage): Promise<void> {
  if (message.type === 'profile-start') {
    profiler = new Session();
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.setSamplingInterval', { interval: 100 });
    await profiler.post('Profiler.start');
  } else if (message.type === 'profile-stop') {
    if (profiler === undefined) throw new Error('profiler not started');
    const { profile: result } = await profiler.post('Profiler.stop');
    writeFileSync(message.path, JSON.stringify(result));
    profiler.disconnect();
    profiler = undefined;
  }
}

serveParent((message) => {
  if (message.type === 'usage') return meteredRequests().then((requests) => ({ type: 'usage' as const, id: message.id, requests }));
  return message.type === 'sample' ? undefined : profile(message);
});
