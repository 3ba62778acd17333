import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { DynamoKeyStore } from '../../lambda/auth/key-store.ts';
import type { KeyRecord } from '../../lambda/auth/key-table.ts';
import { Rollups } from '../../lambda/usage/rollups.ts';
import { DynamoStatsStore } from '../../lambda/usage/stats-store.ts';
import { ensureIdentityTable, ensureKeyTable, ensureStatsTable, ensureUsageTable, localDynamo, startEmbeddedStore } from '../../bin/local/embedded-store.ts';
import { DEFAULT_PACED_MODEL } from '../../bin/local/smoke-delivery.ts';
import { CONFIG_FILE_NAME, configFileCommands } from '../../lib/constructs/config-file.ts';
import { RUNTIME_WRAPPER_PATH } from '../../lib/bundle-files.ts';
import { startAwsJsonFake, type AwsJsonFake } from '../support/aws-json-fake.ts';
import type { TestIdp } from '../support/oidc-idp.ts';
import { builtRicEntry } from './build-ric.ts';
import { startFunctionUrlFront } from './function-url-front.ts';
import { startLambdaEnvironment, type LambdaEnvironment, type LambdaEnvironmentOptions } from './lambda-environment.ts';
import { buildProductionBundle } from './production-bundle.ts';

export interface RealRuntimeOptions {
  /**
   * The routing config: in the production bundle's task root as the stack puts it there
   * (GATEWAY_CONFIG_FILE); with another task root, in GATEWAY_CONFIG_JSON.
   */
  routing: unknown;
  timeoutMs: number;
  /** More function environment: tuning variables, upstream key variables. */
  environment?: Record<string, string>;
  /** Another task root than the production bundle (a fixture handler). */
  taskRoot?: string;
  handler?: string;
  /** The function's memory setting (AWS_LAMBDA_FUNCTION_MEMORY_SIZE) and how its process is started. */
  memoryMb?: number;
  launch?: LambdaEnvironmentOptions['launch'];
  onInitDone?: LambdaEnvironmentOptions['onInitDone'];
  /** The address the function is given for DynamoDB, from the store's own (e.g. a proxy in front of it). */
  dynamoEndpoint?: (storeEndpoint: string) => Promise<string>;
}

export interface RealRuntime {
  url: string;
  lambda: LambdaEnvironment;
  /** Stores a key record in the function's key table. */
  putKey(record: KeyRecord): Promise<void>;
  /** The function's stats table (usage events, rollups) and its reader. */
  stats: DynamoStatsStore;
  rollups: Rollups;
  close(): Promise<void>;
}

/** The temporary credentials the runtime hands the function (its role's), as Lambda does: in the environment. */
export const FUNCTION_ROLE_CREDENTIALS = { accessKeyId: 'ASIATESTTESTTESTTEST', secretAccessKey: 'test-secret' };

/**
 * A Secrets Manager for the function: GetSecretValue answers `value` as the secret's JSON string, to
 * requests signed with the function's role credentials only. Point the function at it with
 * `AWS_ENDPOINT_URL_SECRETSMANAGER`.
 */
export function startFunctionSecrets(value: unknown): Promise<AwsJsonFake> {
  return startAwsJsonFake({
    service: 'secretsmanager',
    targetPrefix: 'secretsmanager',
    credentials: [FUNCTION_ROLE_CREDENTIALS],
    handlers: { GetSecretValue: (input) => ({ output: { Name: input.SecretId, SecretString: JSON.stringify(value) } }) },
  });
}

/** Simulators for every model, and the paced one `npm run smoke`'s delivery check reads. */
export const SMOKE_ROUTING = {
  upstreams: { sim: { type: 'simulator' }, paced: { type: 'simulator', delayMs: 100 } },
  routes: [
    { model: DEFAULT_PACED_MODEL, upstream: 'paced' },
    { model: '*', upstream: 'sim' },
  ],
};

/** The RIC entry, or a clear failure telling how to build it. */
export function requireRic(): string {
  const entry = builtRicEntry();
  if (entry === undefined) throw new Error('The runtime interface client is not built: run `node test/runtime/build-ric.ts` first (npm run test:runtime does).');
  return entry;
}

/**
 * The production bundle under the real runtime interface client, behind a Function URL front,
 * with its tables on a dynalite of its own, fake credentials and every other AWS endpoint on a
 * dead loopback port.
 */
export async function startRealRuntime(options: RealRuntimeOptions): Promise<RealRuntime> {
  const ricEntry = requireRic();
  const store = await startEmbeddedStore(undefined);
  const dynamo = localDynamo(store.endpoint);
  const tables = { keys: 'gateway-keys', usage: 'gateway-usage', stats: 'gateway-stats', identity: 'gateway-identity' };
  await ensureKeyTable(dynamo, tables.keys);
  await ensureUsageTable(dynamo, tables.usage);
  await ensureStatsTable(dynamo, tables.stats);
  await ensureIdentityTable(dynamo, tables.identity);
  const taskRoot = options.taskRoot ?? (await buildProductionBundle());
  const config = options.taskRoot === undefined ? writeConfigFile(options.routing, taskRoot) : { GATEWAY_CONFIG_JSON: JSON.stringify(options.routing) };
  const lambda = await startLambdaEnvironment({
    ricEntry,
    taskRoot,
    handler: options.handler ?? 'index.handler',
    timeoutMs: options.timeoutMs,
    ...(options.memoryMb === undefined ? {} : { memoryMb: options.memoryMb }),
    ...(options.launch === undefined ? {} : { launch: options.launch }),
    ...(options.onInitDone === undefined ? {} : { onInitDone: options.onInitDone }),
    environment: {
      ...config,
      GATEWAY_KEYS_TABLE: tables.keys,
      GATEWAY_USAGE_TABLE: tables.usage,
      GATEWAY_STATS_TABLE: tables.stats,
      // Read only when the routing config has `identity`.
      GATEWAY_IDENTITY_TABLE: tables.identity,
      AWS_ACCESS_KEY_ID: FUNCTION_ROLE_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: FUNCTION_ROLE_CREDENTIALS.secretAccessKey,
      AWS_SESSION_TOKEN: 'test-session-token',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
      AWS_ENDPOINT_URL_DYNAMODB: options.dynamoEndpoint ? await options.dynamoEndpoint(store.endpoint) : store.endpoint,
      AWS_EC2_METADATA_DISABLED: 'true',
      // As the stack sets it: the production bundle's asset holds the wrapper (a fixture's does not).
      ...(options.taskRoot === undefined ? { AWS_LAMBDA_EXEC_WRAPPER: RUNTIME_WRAPPER_PATH } : {}),
      ...options.environment,
    },
  });
  const front = await startFunctionUrlFront((event) => lambda.invoke(event));
  const keys = new DynamoKeyStore(tables.keys, dynamo);
  return {
    url: front.url,
    lambda,
    putKey: (record) => keys.put(record),
    stats: new DynamoStatsStore(tables.stats, dynamo),
    rollups: new Rollups(tables.stats, dynamo),
    async close() {
      await front.close();
      // The handler's work after the last answer (usage record, lastUsedAt) writes to the store:
      // let it finish before the store goes, or dynalite throws on its closed database.
      for (const until = Date.now() + 5_000; !lambda.api.idle() && lambda.starts.at(-1)?.exit === undefined && Date.now() < until; ) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await lambda.close();
      await store.close();
      if (options.taskRoot === undefined) rmSync(taskRoot, { recursive: true, force: true });
    },
  };
}

/** The config file beside the bundle, written by the very commands the stack's bundling runs. */
function writeConfigFile(routing: unknown, taskRoot: string): { GATEWAY_CONFIG_FILE: string } {
  for (const command of configFileCommands(routing, taskRoot)) execFileSync('bash', ['-c', command], { stdio: ['ignore', 'ignore', 'inherit'] });
  return { GATEWAY_CONFIG_FILE: CONFIG_FILE_NAME };
}

/**
 * The runtime with sign-in against `idp`: simulators for every model, the identity config given
 * (`identity`, besides the IdP's issuer and client), its secret (`IDP_CLIENT_SECRET` and the rest)
 * read from `secrets`, and the IdP allowing the gateway's callback. The Function URL's origin is
 * https (AWS's domain) while the front serves it over loopback http: `https` is that origin.
 */
export async function startSignInRuntime(idp: TestIdp, secrets: AwsJsonFake, identity: Record<string, unknown>, options: Pick<RealRuntimeOptions, 'dynamoEndpoint'> = {}): Promise<RealRuntime & { https: string }> {
  const runtime = await startRealRuntime({
    routing: {
      upstreams: { sim: { type: 'simulator' } },
      routes: [{ model: '*', upstream: 'sim' }],
      identity: { issuer: idp.issuer, clientId: idp.clientId, clientSecretEnv: 'IDP_CLIENT_SECRET', ...identity },
    },
    timeoutMs: 10_000,
    environment: { GATEWAY_IDENTITY_SECRET: 'gateway/identity', AWS_ENDPOINT_URL_SECRETSMANAGER: secrets.url },
    ...options,
  });
  const https = runtime.url.replace('http:', 'https:');
  await idp.allowRedirect(`${https}/oauth/callback`);
  return Object.assign(runtime, { https });
}
