import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { DynamoKeyStore } from './auth/key-store.ts';
import { createRouter, parseRoutingConfig } from './config/routing.ts';
import { settingsFromEnv } from './config/settings.ts';
import { createGateway } from './gateway.ts';
import { EnvCredentials, SecretsManagerCredentials } from './upstream/credentials.ts';
import { nodeHttpFetch } from './upstream/node-http-fetch.ts';
import { DynamoUsageStore } from './usage/usage-store.ts';

/**
 * The Lambda entry, and the module `npm start` runs too. The only place that reads the
 * environment and builds AWS clients:
 * - GATEWAY_CONFIG_JSON: the routing config (required)
 * - GATEWAY_KEYS_TABLE: the key table name (required)
 * - GATEWAY_USAGE_TABLE: the usage table name; without it nothing is metered and key limits
 *   other than the output-token ceiling are not enforced
 * - GATEWAY_UPSTREAM_SECRET: Secrets Manager id of the upstream keys; without it, keys come
 *   from the environment variables the upstreams name (local runs)
 * - GATEWAY_* tuning variables: see config/settings.ts
 */
const env = process.env;

function required(name: string): string {
  const value = env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

const router = createRouter(parseRoutingConfig(JSON.parse(required('GATEWAY_CONFIG_JSON'))));
const dynamo = new DynamoDBClient({ maxAttempts: 2 });
const keys = new DynamoKeyStore(required('GATEWAY_KEYS_TABLE'), dynamo);
const usage = env.GATEWAY_USAGE_TABLE ? new DynamoUsageStore(env.GATEWAY_USAGE_TABLE, dynamo) : undefined;
const credentials = env.GATEWAY_UPSTREAM_SECRET
  ? new SecretsManagerCredentials(env.GATEWAY_UPSTREAM_SECRET, new SecretsManagerClient({}))
  : new EnvCredentials(env);
const onLambda = env.AWS_LAMBDA_FUNCTION_NAME !== undefined;

export const handler = createGateway({
  router,
  keys,
  credentials,
  ...(usage ? { usage } : {}),
  settings: settingsFromEnv(env),
  log: env.GATEWAY_LOG === 'off' ? () => {} : onLambda ? (line) => console.log(line) : (line) => process.stdout.write(`${line}\n`),
  fetch: nodeHttpFetch,
});
