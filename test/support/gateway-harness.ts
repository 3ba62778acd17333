import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { DynamoKeyStore } from '../../lambda/auth/key-store.ts';
import { mintKey, type KeyRequest } from '../../lambda/auth/issue-key.ts';
import { createRouter, parseRoutingConfig } from '../../lambda/config/routing.ts';
import { DEFAULT_SETTINGS, type Settings } from '../../lambda/config/settings.ts';
import { createGateway } from '../../lambda/gateway.ts';
import type { GatewayDeps } from '../../lambda/deps.ts';
import { EnvCredentials, type CredentialSource } from '../../lambda/upstream/credentials.ts';
import { upstreamFetch } from '../../lambda/upstream/upstream-fetch.ts';
import { UpstreamHealth, type HealthOptions } from '../../lambda/upstream/upstream-health.ts';
import { ensureIdentityTable, ensureKeyTable, ensureStatsTable, ensureUsageTable, localDynamo, startEmbeddedStore, type EmbeddedStore } from '../../bin/local/embedded-store.ts';
import { createAdminDoor } from '../../lambda/admin/index.ts';
import { ConsoleSessions } from '../../lambda/admin/console-sessions.ts';
import { consoleCompletion } from '../../lambda/admin/sign-in.ts';
import { createIdentityDoor, type IdentityDoor } from '../../lambda/identity/index.ts';
import { IdentityTable } from '../../lambda/identity/store/table.ts';
import { newTokenKey, type IdentitySecret } from '../../lambda/identity/secrets.ts';
import { Rollups } from '../../lambda/usage/rollups.ts';
import { PoolSpendCache } from '../../lambda/usage/group-pools.ts';
import { DynamoStatsStore } from '../../lambda/usage/stats-store.ts';
import { DynamoUsageStore } from '../../lambda/usage/usage-store.ts';
import { UsageRecorder } from '../../lambda/usage/usage-recorder.ts';
import { createPriceBook } from '../../lambda/usage/prices.ts';
import { createFunctionUrlServer, type FunctionUrlServer, type FunctionUrlServerOptions, type StreamingHandler } from '../../bin/local/function-url-server.ts';

export interface HarnessOptions {
  config: unknown;
  settings?: Partial<Settings>;
  /** Environment the upstream credentials are read from (EnvCredentials). */
  env?: NodeJS.ProcessEnv;
  credentials?: CredentialSource;
  /** Cooldowns and key rests (e.g. a test clock). */
  health?: Partial<HealthOptions>;
  functionTimeoutMs?: number;
  fetch?: typeof fetch;
  /** Another gateway instance's tables: both instances then share keys, usage and limits (as Lambda instances do). */
  shareStoreWith?: Harness;
  /** The local server's limits and timeouts (bin/local/function-url-server.ts). */
  server?: Partial<Omit<FunctionUrlServerOptions, 'maxBodyBytes' | 'functionTimeoutMs'>>;
  /** How long group pool spend is cached (ms; the gateway's 30 s unless given; at least 1). */
  poolCacheMs?: number;
  /** With a config that has `identity`: the IdP client secret, and a clock for the sign-in room. */
  identity?: { clientSecret?: string; now?: () => number; otlpHeaders?: string };
  /** The console room (always built): its clock. */
  admin?: { now?: () => number };
}

export interface Harness {
  url: string;
  store: DynamoKeyStore;
  usage: DynamoUsageStore;
  /** The stats table: usage events (Lambda mode, usageFlushMs 0) and rollups, and their reader. */
  stats: DynamoStatsStore;
  rollups: Rollups;
  /** What the gateway records through (batched when `settings.usageFlushMs` > 0). */
  recorder: UsageRecorder;
  /** Log lines the gateway wrote, parsed. */
  logs: Record<string, unknown>[];
  rawLogs: string[];
  storeInfo: { endpoint: string; keyTable: string; usageTable: string; statsTable: string; identityTable: string; identitySecret: IdentitySecret };
  /** The sign-in room, when the config has `identity`. */
  identity: IdentityDoor | undefined;
  /** This instance's view of its upstreams (the console's Upstreams view shows it). */
  health: UpstreamHealth;
  server: FunctionUrlServer;
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
  const name = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2)}`;
  const storeInfo = shared ?? {
    endpoint: (embedded as EmbeddedStore).endpoint,
    keyTable: name('keys'),
    usageTable: name('usage'),
    statsTable: name('stats'),
    identityTable: name('identity'),
    identitySecret: { tokenKey: newTokenKey(), ...(options.identity?.clientSecret ? { clientSecret: options.identity.clientSecret } : {}), ...(options.identity?.otlpHeaders ? { otlpHeaders: options.identity.otlpHeaders } : {}) },
  };
  const dynamo = localDynamo(storeInfo.endpoint);
  if (!shared) {
    await ensureKeyTable(dynamo, storeInfo.keyTable);
    await ensureUsageTable(dynamo, storeInfo.usageTable);
    await ensureStatsTable(dynamo, storeInfo.statsTable);
    await ensureIdentityTable(dynamo, storeInfo.identityTable);
  }
  const store = new DynamoKeyStore(storeInfo.keyTable, dynamo);
  const usage = new DynamoUsageStore(storeInfo.usageTable, dynamo);
  const settings = { ...DEFAULT_SETTINGS, ...options.settings };
  const stats = new DynamoStatsStore(storeInfo.statsTable, dynamo);
  const recorder = new UsageRecorder(usage, { flushMs: settings.usageFlushMs, stats });
  const pools = new PoolSpendCache(storeInfo.statsTable, dynamo, options.poolCacheMs);
  const poolSpend = (groups: readonly string[], at: Date) => pools.spend(groups, at);
  const routing = parseRoutingConfig(options.config);
  const rawLogs: string[] = [];
  const logs: Record<string, unknown>[] = [];
  const log = (line: string) => {
    rawLogs.push(line);
    logs.push(JSON.parse(line));
  };
  const identity = routing.identity
    ? createIdentityDoor({
        config: routing.identity,
        tableName: storeInfo.identityTable,
        dynamo,
        secret: async () => storeInfo.identitySecret,
        // As npm start: the address the local server listens on.
        originOf: (event) => `http://${event.requestContext.domainName}`,
        log,
        cacheSeconds: settings.sessionCacheSeconds,
        ...(options.identity?.now ? { now: options.identity.now } : {}),
        spend: { days: (account: string, from: string) => recorder.days(account, from), pools: poolSpend },
        fetch: options.fetch ?? upstreamFetch,
        completions: { console: consoleCompletion(new ConsoleSessions(new IdentityTable(storeInfo.identityTable, dynamo))) },
      })
    : undefined;
  const health = new UpstreamHealth(options.health);
  const router = createRouter(routing);
  // The console as lambda/handler.ts builds it: npm start's tables (identity table always).
  const admin = createAdminDoor({
    keys: store,
    dynamo,
    identityTableName: storeInfo.identityTable,
    statsTableName: storeInfo.statsTable,
    usageTableName: storeInfo.usageTable,
    ...(routing.identity ? { identityConfig: routing.identity } : {}),
    ...(identity ? { identity } : {}),
    router,
    health,
    originOf: (event) => `http://${event.requestContext.domainName}`,
    log,
    keyCacheSeconds: settings.keyCacheSeconds,
    ...(options.admin?.now ? { now: options.admin.now } : {}),
  });
  const deps: GatewayDeps = {
    router,
    prices: createPriceBook(routing.prices),
    keys: store,
    credentials: options.credentials ?? new EnvCredentials(options.env ?? {}),
    health,
    usage: recorder,
    poolSpend,
    settings,
    log,
    // The production upstream client, so tests exercise what deploys.
    fetch: options.fetch ?? upstreamFetch,
    ...(identity ? { identity } : {}),
    admin,
  };
  const handler = createGateway(deps) as unknown as StreamingHandler;
  const server = createFunctionUrlServer(handler, {
    ...options.server,
    log,
    maxBodyBytes: deps.settings.maxBodyBytes,
    functionTimeoutMs: options.functionTimeoutMs ?? 900_000,
  });
  const url = await listen(server);
  return {
    url,
    store,
    usage,
    stats,
    rollups: new Rollups(storeInfo.statsTable, dynamo),
    recorder,
    storeInfo,
    identity,
    health,
    server,
    logs,
    rawLogs,
    async issueKey(request = {}) {
      const { key, record } = mintKey({ name: 'test', ...request });
      await store.put(record);
      return { key, id: record.id };
    },
    async close() {
      // Invocations end after their response (usage is written in requestEnd): wait for them.
      for (const until = Date.now() + 5_000; server.inFlight > 0 && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 10));
      await recorder.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
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
