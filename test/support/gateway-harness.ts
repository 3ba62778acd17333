import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { DynamoKeyStore } from '../../lambda/auth/key-store.ts';
import { mintKey, type KeyRequest } from '../../lambda/auth/issue-key.ts';
import { createRouter, parseRoutingConfig } from '../../lambda/config/routing.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../lambda/config/settings.ts';
import { createGateway } from '../../lambda/gateway.ts';
import type { GatewayDeps } from '../../lambda/deps.ts';
import { EnvCredentials, type CredentialSource } from '../../lambda/upstream/credentials.ts';
import { nodeHttpFetch } from '../../lambda/upstream/node-http-fetch.ts';
import { ensureKeyTable, ensureUsageTable, localDynamoClient, startEmbeddedStore, type EmbeddedStore } from '../../bin/local/embedded-store.ts';
import { DynamoUsageStore } from '../../lambda/usage/usage-store.ts';
import { createFunctionUrlServer, type StreamingHandler } from '../../bin/local/function-url-server.ts';

export interface HarnessOptions {
  config: unknown;
  settings?: Partial<Settings>;
  /** Environment the upstream credentials are read from (EnvCredentials). */
  env?: NodeJS.ProcessEnv;
  credentials?: CredentialSource;
  functionTimeoutMs?: number;
  fetch?: typeof fetch;
  /** Another gateway instance's tables: both instances then share keys, usage and limits (as Lambda instances do). */
  shareStoreWith?: Harness;
}

export interface Harness {
  url: string;
  store: DynamoKeyStore;
  usage: DynamoUsageStore;
  /** Log lines the gateway wrote, parsed. */
  logs: Record<string, unknown>[];
  rawLogs: string[];
  storeInfo: { endpoint: string; keyTable: string; usageTable: string };
  issueKey(request?: Partial<KeyRequest>): Promise<{ key: string; id: string }>;
  close(): Promise<void>;
}

/**
 * The real gateway pipeline behind the local Function URL server, on 127.0.0.1, with the key
 * table in an in-memory dynalite: the parts are the production ones, only the wiring is here.
 */
export async function startGateway(options: HarnessOptions): Promise<Harness> {
  const shared = options.shareStoreWith?.storeInfo;
  const embedded: EmbeddedStore | undefined = shared ? undefined : await startEmbeddedStore(undefined);
  const storeInfo = shared ?? { endpoint: (embedded as EmbeddedStore).endpoint, keyTable: `keys-${Math.random().toString(36).slice(2)}`, usageTable: `usage-${Math.random().toString(36).slice(2)}` };
  const dynamo = localDynamoClient(storeInfo.endpoint);
  if (!shared) {
    await ensureKeyTable(dynamo, storeInfo.keyTable);
    await ensureUsageTable(dynamo, storeInfo.usageTable);
  }
  const store = new DynamoKeyStore(storeInfo.keyTable, dynamo);
  const usage = new DynamoUsageStore(storeInfo.usageTable, dynamo);
  const rawLogs: string[] = [];
  const logs: Record<string, unknown>[] = [];
  const deps: GatewayDeps = {
    router: createRouter(parseRoutingConfig(options.config)),
    keys: store,
    credentials: options.credentials ?? new EnvCredentials(options.env ?? {}),
    usage,
    settings: { ...DEFAULT_SETTINGS, ...options.settings },
    log: (line) => {
      rawLogs.push(line);
      logs.push(JSON.parse(line));
    },
    // The production upstream client, so tests exercise what deploys.
    fetch: options.fetch ?? nodeHttpFetch,
  };
  const gatewayHandler = createGateway(deps) as unknown as StreamingHandler;
  // Invocations end after their response (usage is written in requestEnd): close() waits for them.
  let inFlight = 0;
  const handler: StreamingHandler = async (event, stream, context) => {
    inFlight++;
    try {
      return await gatewayHandler(event, stream, context);
    } finally {
      inFlight--;
    }
  };
  const server = createFunctionUrlServer(handler, {
    maxBodyBytes: deps.settings.maxBodyBytes,
    functionTimeoutMs: options.functionTimeoutMs ?? 900_000,
  });
  const url = await listen(server);
  return {
    url,
    store,
    usage,
    storeInfo,
    logs,
    rawLogs,
    async issueKey(request = {}) {
      const { key, record } = mintKey({ name: 'test', ...request });
      await store.put(record);
      return { key, id: record.id };
    },
    async close() {
      for (const until = Date.now() + 5_000; inFlight > 0 && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 10));
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      dynamo.destroy();
      await embedded?.close();
    },
  };
}

export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Waits until the gateway has written `count` log lines (they are written after the body ends). */
export async function waitForLogs(harness: Harness, count: number, timeoutMs = 5_000): Promise<Record<string, unknown>[]> {
  const until = Date.now() + timeoutMs;
  while (harness.logs.length < count) {
    if (Date.now() > until) throw new Error(`expected ${count} log lines, got ${harness.logs.length}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return harness.logs;
}

/** The log line of one request (by the `request-id` its response carried), once written. */
export async function logOf(harness: Harness, requestId: string | null, timeoutMs = 5_000): Promise<Record<string, unknown>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const line = harness.logs.find((entry) => entry.requestId === requestId);
    if (line) return line;
    if (Date.now() > until) throw new Error(`no log line for ${requestId}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
