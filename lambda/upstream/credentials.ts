import type { SecretReader } from '../aws/secrets.ts';
import { GatewayError } from '../errors.ts';
import type { Upstream } from '../config/routing.ts';

/**
 * Where upstream API keys come from. An upstream needs keys when its config names `apiKeyEnv`
 * (one name, or a list for several keys); one without it (a self-hosted model server, or an
 * upstream signed with AWS SigV4) is called without one.
 */
export interface CredentialSource {
  /** The upstream's keys, in configured order (empty when it takes none). */
  keys(upstream: Upstream): Promise<readonly string[]>;
  /** Drops cached values, e.g. after an upstream 401 (the operator may have rotated the key). */
  invalidate(): void;
  /**
   * Starts fetching what `keys` will need, so that a read the request will make anyway runs
   * alongside the key lookup instead of after it (a cold start's first request pays both), or
   * during Lambda's Init (lambda/handler.ts). Resolves once the read has settled and never
   * rejects: failures are left for `keys` to report.
   */
  prefetch(): Promise<void>;
}

/** Local runs: the key is in the environment variable the upstream names. */
export class EnvCredentials implements CredentialSource {
  readonly #env: NodeJS.ProcessEnv;

  constructor(env: NodeJS.ProcessEnv) {
    this.#env = env;
  }

  async keys(upstream: Upstream): Promise<readonly string[]> {
    return upstream.apiKeyEnvs.map((name) => {
      const value = this.#env[name];
      if (!value) throw misconfigured(`Upstream "${upstream.name}" needs a credential: set the environment variable ${name}.`);
      return value;
    });
  }

  invalidate(): void {}

  async prefetch(): Promise<void> {}
}

/**
 * Lambda: one Secrets Manager secret holding `{"<upstream name>": "<key>" | ["<key>", ...], ...}`,
 * read lazily and cached in memory for `ttlMs`. Concurrent misses share one read; failures are
 * not cached.
 */
export class SecretsManagerCredentials implements CredentialSource {
  readonly #secretId: string;
  readonly #read: SecretReader;
  readonly #ttlMs: number;
  #cache: { value: Promise<Record<string, string[]>>; at: number } | undefined;

  constructor(secretId: string, read: SecretReader, ttlMs = 5 * 60_000) {
    this.#secretId = secretId;
    this.#read = read;
    this.#ttlMs = ttlMs;
  }

  async keys(upstream: Upstream): Promise<readonly string[]> {
    if (upstream.apiKeyEnvs.length === 0) return [];
    const secrets = await this.#load();
    // The member named after the upstream; else one member per configured variable name.
    const keys = secrets[upstream.name] ?? upstream.apiKeyEnvs.flatMap((name) => secrets[name] ?? []);
    if (keys.length === 0) {
      throw misconfigured(`Upstream "${upstream.name}" needs a credential: add a "${upstream.name}" member (a key, or a list of keys) to the upstream secret.`);
    }
    return keys;
  }

  invalidate(): void {
    this.#cache = undefined;
  }

  prefetch(): Promise<void> {
    return this.#load().then(
      () => {},
      () => {},
    );
  }

  #load(): Promise<Record<string, string[]>> {
    if (!this.#cache || Date.now() - this.#cache.at > this.#ttlMs) {
      const value = this.#read(this.#secretId).then(
        (value) => parseSecret(value),
        (error: unknown) => {
          throw misconfigured('The upstream credentials secret could not be read.', error);
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

/**
 * A credential the gateway cannot find or read. Any key holder may trigger it, so what the
 * client reads names nothing of the operator's setup (no variable, secret member or upstream
 * name); the detail is the error's cause, which goes to the request's log line only.
 */
function misconfigured(detail: string, cause?: unknown): GatewayError {
  return new GatewayError('configuration', 'The gateway is misconfigured for this model; its operator can find the cause in the gateway log under this request id.', {
    cause: new Error(detail, cause === undefined ? undefined : { cause }),
  });
}

function parseSecret(text: string | undefined): Record<string, string[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text ?? '{}');
  } catch {
    throw misconfigured('The upstream credentials secret is not a JSON object.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw misconfigured('The upstream credentials secret is not a JSON object.');
  }
  const secrets: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(parsed)) {
    const keys = (Array.isArray(value) ? value : [value]).filter((key): key is string => typeof key === 'string' && key !== '');
    if (keys.length > 0) secrets[name] = keys;
  }
  return secrets;
}
