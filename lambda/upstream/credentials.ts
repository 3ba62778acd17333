import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { GatewayError } from '../errors.ts';
import type { Upstream } from '../config/routing.ts';

/**
 * Where upstream API keys come from. An upstream needs a credential when its config names
 * `apiKeyEnv`; one without it (a self-hosted model server) is called without auth.
 */
export interface CredentialSource {
  get(upstream: Upstream): Promise<string | undefined>;
  /** Drops cached values, e.g. after an upstream 401 (the operator may have rotated the key). */
  invalidate(): void;
}

/** Local runs: the key is in the environment variable the upstream names. */
export class EnvCredentials implements CredentialSource {
  readonly #env: NodeJS.ProcessEnv;

  constructor(env: NodeJS.ProcessEnv) {
    this.#env = env;
  }

  async get(upstream: Upstream): Promise<string | undefined> {
    if (upstream.apiKeyEnv === undefined) return undefined;
    const value = this.#env[upstream.apiKeyEnv];
    if (!value) {
      throw new GatewayError('configuration', `Upstream "${upstream.name}" needs a credential: set the environment variable ${upstream.apiKeyEnv}.`);
    }
    return value;
  }

  invalidate(): void {}
}

/**
 * Lambda: one Secrets Manager secret holding `{"<upstream name>": "<key>", ...}`, read lazily and
 * cached in memory for `ttlMs`. Concurrent misses share one read; failures are not cached.
 */
export class SecretsManagerCredentials implements CredentialSource {
  readonly #secretId: string;
  readonly #client: SecretsManagerClient;
  readonly #ttlMs: number;
  #cache: { value: Promise<Record<string, string>>; at: number } | undefined;

  constructor(secretId: string, client: SecretsManagerClient, ttlMs = 5 * 60_000) {
    this.#secretId = secretId;
    this.#client = client;
    this.#ttlMs = ttlMs;
  }

  async get(upstream: Upstream): Promise<string | undefined> {
    if (upstream.apiKeyEnv === undefined) return undefined;
    const secrets = await this.#load();
    const value = secrets[upstream.name] ?? secrets[upstream.apiKeyEnv];
    if (!value) {
      throw new GatewayError('configuration', `Upstream "${upstream.name}" needs a credential: add a "${upstream.name}" member to the upstream secret.`);
    }
    return value;
  }

  invalidate(): void {
    this.#cache = undefined;
  }

  #load(): Promise<Record<string, string>> {
    if (!this.#cache || Date.now() - this.#cache.at > this.#ttlMs) {
      const value = this.#client.send(new GetSecretValueCommand({ SecretId: this.#secretId })).then(
        (result) => parseSecret(result.SecretString),
        (error: unknown) => {
          throw new GatewayError('configuration', 'The upstream credentials secret could not be read.', { cause: error });
        },
      );
      value.catch(() => {
        if (this.#cache?.value === value) this.#cache = undefined;
      });
      this.#cache = { value, at: Date.now() };
    }
    return this.#cache.value;
  }
}

function parseSecret(text: string | undefined): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text ?? '{}');
  } catch {
    throw new GatewayError('configuration', 'The upstream credentials secret is not a JSON object.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new GatewayError('configuration', 'The upstream credentials secret is not a JSON object.');
  }
  const secrets: Record<string, string> = {};
  for (const [name, value] of Object.entries(parsed)) if (typeof value === 'string') secrets[name] = value;
  return secrets;
}
