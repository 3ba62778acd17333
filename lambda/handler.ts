import type { LambdaFunctionURLEvent } from 'aws-lambda';
import type { AdminDoor } from './admin/index.ts';
import { DynamoKeyStore } from './auth/key-store.ts';
import { bareDynamo } from './aws/dynamodb.ts';
import { bareSecretReader } from './aws/secrets.ts';
import { readConfigText } from './config/config-source.ts';
import type { IdentityConfig } from './config/identity-schema.ts';
import { createRouter, parseRoutingConfig } from './config/routing.ts';
import { settingsFromEnv } from './config/settings.ts';
import { createGateway } from './gateway.ts';
import type { IdentityDoor } from './identity/index.ts';
import { acceptRestEvents } from './runtime-event.ts';
import { EnvCredentials, SecretsManagerCredentials } from './upstream/credentials.ts';
import { preconnectUpstream, upstreamFetch } from './upstream/upstream-fetch.ts';
import { UpstreamHealth } from './upstream/upstream-health.ts';
import { createPriceBook } from './usage/prices.ts';
import { PoolSpendCache } from './usage/group-pools.ts';
import { DynamoStatsStore } from './usage/stats-store.ts';
import { UsageRecorder } from './usage/usage-recorder.ts';
import { DynamoUsageStore } from './usage/usage-store.ts';

/**
 * The Lambda entry, and the module `npm start` runs too. The only place that reads the
 * environment and builds AWS clients:
 * - GATEWAY_CONFIG_FILE (deployed: a file in the bundle) or GATEWAY_CONFIG_JSON (local runs):
 *   the routing config, one of them required (config/config-source.ts)
 * - GATEWAY_KEYS_TABLE: the key table name (required)
 * - GATEWAY_USAGE_TABLE: the usage table name; without it nothing is metered and key limits
 *   other than the output-token ceiling are not enforced
 * - GATEWAY_STATS_TABLE: the stats table name (usage rollups for the console and group pools);
 *   without it nothing is rolled up
 * - GATEWAY_UPSTREAM_SECRET: Secrets Manager id of the upstream keys; without it, keys come
 *   from the environment variables the upstreams name (local runs)
 * - GATEWAY_PRIVATE_API_DOMAIN: the private API's custom domain (runtime-event.ts)
 * - GATEWAY_LOCAL_STORE_ENDPOINT: npm start's embedded store; the tables are read there with
 *   its own placeholder credentials, so the user's AWS credentials stay theirs (for upstreams)
 * - with the config's `identity` (sign-in, docs/sign-in.md): GATEWAY_IDENTITY_TABLE (required),
 *   and the identity secret: GATEWAY_IDENTITY_SECRET (Secrets Manager id, deployed) or
 *   GATEWAY_IDENTITY_SECRET_FILE (npm start's `.gateway/identity-secret.json`)
 * - GATEWAY_IDENTITY_TABLE without `identity`: the console's sessions and audit trail
 *   (docs/console.md; npm start always sets it); without it the admin API takes admin keys only
 * - GATEWAY_* tuning variables: see config/settings.ts
 */
const env = process.env;

function required(name: string): string {
  const value = env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

const settings = settingsFromEnv(env);
const routing = parseRoutingConfig(JSON.parse(readConfigText(env, import.meta.url)));
const router = createRouter(routing);
// Lambda sets AWS_REGION; a local run may set either name.
const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1';
const localStore = env.GATEWAY_LOCAL_STORE_ENDPOINT;
const dynamo = localStore
  ? bareDynamo({ endpoint: localStore, region: 'local', credentials: async () => ({ accessKeyId: 'local', secretAccessKey: 'local' }) })
  : bareDynamo({ region });
const keys = new DynamoKeyStore(required('GATEWAY_KEYS_TABLE'), dynamo);
// Straight to stdout on both runtimes: with Lambda's JSON log format, console.log would wrap
// the line as an escaped string in `message`, which Logs Insights cannot query and from which
// CloudWatch would not extract an Embedded Metric Format record (it needs `_aws` at the top).
const log = env.GATEWAY_LOG === 'off' ? () => {} : (line: string) => process.stdout.write(`${line}\n`);
const usageStore = env.GATEWAY_USAGE_TABLE ? new DynamoUsageStore(env.GATEWAY_USAGE_TABLE, dynamo) : undefined;
// npm start's embedded store serves this process alone: leases on requests in flight found there
// were left by a run that never gave them back (kill -9), and would hold their keys' slots.
if (localStore) await usageStore?.forgetLeases();
const usage = usageStore
  ? new UsageRecorder(usageStore, {
      flushMs: settings.usageFlushMs,
      ...(env.GATEWAY_STATS_TABLE ? { stats: new DynamoStatsStore(env.GATEWAY_STATS_TABLE, dynamo) } : {}),
      onWriteError: (error, items) => log(JSON.stringify({ level: 'error', msg: 'usage write failed; kept for the next flush', items, cause: error instanceof Error ? error.message : String(error) })),
    })
  : undefined;
// Group pools read the group rollups (cached 30 s per instance; docs/sign-in.md states the overshoot).
const pools = env.GATEWAY_STATS_TABLE ? new PoolSpendCache(env.GATEWAY_STATS_TABLE, dynamo) : undefined;
const poolSpend = pools && ((groups: readonly string[], at: Date) => pools.spend(groups, at));
const credentials = env.GATEWAY_UPSTREAM_SECRET
  ? new SecretsManagerCredentials(env.GATEWAY_UPSTREAM_SECRET, bareSecretReader({ region }))
  : new EnvCredentials(env);

/** The gateway's public origin (without `identity.publicUrl`): a Function URL's domain is AWS's; npm start's local server names the address it listens on (plain http, loopback). */
const originOf = (event: LambdaFunctionURLEvent) => `${localStore ? 'http' : 'https'}://${event.requestContext.domainName}`;
const identity = routing.identity ? identityDoor(routing.identity, required('GATEWAY_IDENTITY_TABLE')) : undefined;
const health = new UpstreamHealth();

const gateway = createGateway({
  router,
  keys,
  credentials,
  health,
  prices: createPriceBook(routing.prices),
  ...(usage ? { usage } : {}),
  ...(poolSpend ? { poolSpend } : {}),
  settings,
  log,
  fetch: upstreamFetch,
  ...(identity ? { identity } : {}),
  admin: adminDoor(),
});

/**
 * Function URL events as they come; REST events from the private API (GATEWAY_PRIVATE_API_DOMAIN,
 * its custom domain) translated to them. Those passed API Gateway's resource policy, which admits
 * only the VPC endpoint: they count as having come through the custom domain's origin check too.
 */
export const handler = acceptRestEvents(gateway, {
  ...(env.GATEWAY_PRIVATE_API_DOMAIN ? { domainName: env.GATEWAY_PRIVATE_API_DOMAIN } : {}),
  ...(settings.originSecret ? { vouchedHeaders: { 'x-origin-verify': settings.originSecret } } : {}),
});

/**
 * The sign-in room, loaded on its first use: a cold start that serves only model requests with
 * keys neither evaluates its modules nor reads its secret. The identity secret is read once, on
 * the first request that needs it.
 */
function identityDoor(config: IdentityConfig, tableName: string): IdentityDoor {
  const secretId = env.GATEWAY_IDENTITY_SECRET;
  const secretFile = secretId ? undefined : required('GATEWAY_IDENTITY_SECRET_FILE');
  let door: Promise<IdentityDoor> | undefined;
  const open = () =>
    (door ??= import('./identity/index.ts').then(async ({ createIdentityDoor }) => {
      const { secretFromFile, secretFromSecretsManager } = await import('./identity/secrets.ts');
      // The console's end of the shared IdP round trip (its sign-in), loaded with the sign-in room.
      const [{ consoleCompletion }, { ConsoleSessions }, { IdentityTable }] = await Promise.all([import('./admin/sign-in.ts'), import('./admin/console-sessions.ts'), import('./identity/store/table.ts')]);
      return createIdentityDoor({
        config,
        tableName,
        dynamo,
        completions: { console: consoleCompletion(new ConsoleSessions(new IdentityTable(tableName, dynamo))) },
        secret: secretId
          ? secretFromSecretsManager(bareSecretReader({ region }), secretId, config.clientSecretEnv, config.otlp?.headersEnv)
          : secretFromFile(secretFile as string, env, config.clientSecretEnv, config.otlp?.headersEnv),
        originOf,
        log,
        cacheSeconds: settings.sessionCacheSeconds,
        ...(usage ? { spend: { days: (account: string, from: string) => usage.days(account, from), ...(poolSpend ? { pools: poolSpend } : {}) } } : {}),
        fetch: upstreamFetch,
      });
    }));
  return {
    serve: async (event, state) => (await open()).serve(event, state),
    principal: async (token) => (await open()).principal(token),
    person: async (sub) => (await open()).person(sub),
    policyFor: async (principal) => (await open()).policyFor(principal),
    startSignIn: async (event, state, purpose) => (await open()).startSignIn(event, state, purpose),
  };
}

/**
 * The console room (`/admin…`), loaded on its first request: the model path's cold starts
 * neither evaluate it nor read its page's files.
 */
function adminDoor(): AdminDoor {
  const startedAt = Date.now();
  let door: Promise<AdminDoor> | undefined;
  const open = () =>
    (door ??= import('./admin/index.ts').then(({ createAdminDoor }) =>
      createAdminDoor({
        keys,
        dynamo,
        ...(env.GATEWAY_IDENTITY_TABLE ? { identityTableName: env.GATEWAY_IDENTITY_TABLE } : {}),
        ...(env.GATEWAY_STATS_TABLE ? { statsTableName: env.GATEWAY_STATS_TABLE } : {}),
        ...(env.GATEWAY_USAGE_TABLE ? { usageTableName: env.GATEWAY_USAGE_TABLE } : {}),
        ...(routing.identity ? { identityConfig: routing.identity } : {}),
        ...(identity ? { identity } : {}),
        router,
        health,
        originOf,
        log,
        startedAt,
        keyCacheSeconds: settings.keyCacheSeconds,
      }),
    ));
  return { serve: async (event, state) => (await open()).serve(event, state) };
}

/**
 * Lambda runs an on-demand environment's Init at a full vCPU whatever the memory size, and its
 * invocations at the size's share (docs/performance.md, "Lambda memory sizes"). The first
 * request would otherwise open the TLS connections to Secrets Manager, DynamoDB and the
 * upstreams and read the secret at that share (at 512 MB, 29 % of a vCPU); here they cost a
 * fraction of it. Bounded and never fatal: a request reads again whatever this did not finish.
 */
const INIT_WARM_UP_MS = 2_000;
/** A key-table lookup that finds nothing (real hashes are 64 hex digits): it only opens the connection. */
const WARM_UP_KEY_HASH = 'init-warm-up';

/**
 * The upstreams' connections (TCP and TLS handshakes, a few ms of CPU each at a full vCPU, several
 * times that at a small size's share) opened during an on-demand Init, whose invocation follows at
 * once. Not for provisioned concurrency or SnapStart, whose Init may come long before a request:
 * a connection the provider closed meanwhile would fail the first request. At most 8 origins.
 */
function upstreamOrigins(): string[] {
  if ((env.AWS_LAMBDA_INITIALIZATION_TYPE ?? 'on-demand') !== 'on-demand') return [];
  const origins = new Set<string>();
  for (const upstream of Object.values(routing.upstreams)) {
    if (upstream.baseUrl !== undefined && upstream.type !== 'bedrock' && upstream.type !== 'simulator') origins.add(upstream.baseUrl);
  }
  return [...origins].slice(0, 8);
}

async function warmUp(): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const work = Promise.allSettled([credentials.prefetch(), keys.get(WARM_UP_KEY_HASH), ...upstreamOrigins().map(preconnectUpstream)]).then(() => true);
  const finished = await Promise.race([work, new Promise<boolean>((resolve) => (timer = setTimeout(resolve, INIT_WARM_UP_MS, false)))]);
  clearTimeout(timer);
  // A read still under way would be frozen with the environment (provisioned concurrency) and
  // could fail on thaw: requests start their own instead of waiting on it.
  if (!finished) credentials.invalidate();
}

if (env.AWS_LAMBDA_RUNTIME_API && !localStore) await warmUp();

/** Writes the usage still held in memory (npm start calls it before it exits; on Lambda nothing is ever held). */
export async function flushUsage(): Promise<void> {
  await usage?.close();
}
