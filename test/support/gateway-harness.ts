import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { DynamoKeyStore } from '../../lambda/auth/key-store.ts';
import { mintKey, type KeyRequest } from '../../lambda/auth/issue-key.ts';
import { createRouter, parseRoutingConfig } from '../../lambda/config/routing.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../lambda/config/settings.ts';
import { createGateway } from '../../lambda/gateway.ts';
import type { GatewayDeps } from '../../lambda/deps.ts';
import { EnvCredentials, type CredentialSource } from '../../lambda/upstream/credentials.ts';
import { ensureKeyTable, localDynamoClient, startEmbeddedStore, type EmbeddedStore } from '../../bin/local/embedded-store.ts';
import { createFunctionUrlServer, type StreamingHandler } from '../../bin/local/function-url-server.ts';

export interface HarnessOptions {
  config: unknown;
  settings?: Partial<Settings>;
  /** Environment the upstream credentials are read from (EnvCredentials). */
  env?: NodeJS.ProcessEnv;
  credentials?: CredentialSource;
  functionTimeoutMs?: number;
  fetch?: typeof fetch;
}

export interface Harness {
  url: string;
  store: DynamoKeyStore;
  /** Log lines the gateway wrote, parsed. */
  logs: Record<string, unknown>[];
  rawLogs: string[];
  issueKey(request?: Partial<KeyRequest>): Promise<{ key: string; id: string }>;
  close(): Promise<void>;
}

/**
 * The real gateway pipeline behind the local Function URL server, on 127.0.0.1, with the key
 * table in an in-memory dynalite: the parts are the production ones, only the wiring is here.
 */
export async function startGateway(options: HarnessOptions): Promise<Harness> {
  const embedded: EmbeddedStore = await startEmbeddedStore(undefined);
  const dynamo = localDynamoClient(embedded.endpoint);
  const table = `keys-${Math.random().toString(36).slice(2)}`;
  await ensureKeyTable(dynamo, table);
  const store = new DynamoKeyStore(table, dynamo);
  const rawLogs: string[] = [];
  const logs: Record<string, unknown>[] = [];
  const deps: GatewayDeps = {
    router: createRouter(parseRoutingConfig(options.config)),
    keys: store,
    credentials: options.credentials ?? new EnvCredentials(options.env ?? {}),
    settings: { ...DEFAULT_SETTINGS, ...options.settings },
    log: (line) => {
      rawLogs.push(line);
      logs.push(JSON.parse(line));
    },
    fetch: options.fetch ?? ((input, init) => fetch(input, init)),
  };
  const handler = createGateway(deps) as unknown as StreamingHandler;
  const server = createFunctionUrlServer(handler, {
    maxBodyBytes: deps.settings.maxBodyBytes,
    functionTimeoutMs: options.functionTimeoutMs ?? 900_000,
  });
  const url = await listen(server);
  return {
    url,
    store,
    logs,
    rawLogs,
    async issueKey(request = {}) {
      const { key, record } = mintKey({ name: 'test', ...request });
      await store.put(record);
      return { key, id: record.id };
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      dynamo.destroy();
      await embedded.close();
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
