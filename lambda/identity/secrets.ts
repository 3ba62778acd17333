import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { SecretReader } from '../aws/secrets.ts';

/**
 * The identity secret: `tokenKey` (random, created with the deployment or by the first npm start)
 * and the IdP client secret when the client has one. Deployed it is one Secrets Manager secret
 * (`{"tokenKey": "…", "<clientSecretEnv>": "…"}`); locally `.gateway/identity-secret.json` holds
 * the token key and the client secret comes from the environment variable `clientSecretEnv` names.
 */
export interface IdentitySecret {
  tokenKey: string;
  clientSecret?: string;
  /** The OTLP collector's extra headers (`identity.otlp.headersEnv`). */
  otlpHeaders?: string;
}

export type IdentitySecretSource = () => Promise<IdentitySecret>;

export function secretFromFile(path: string, env: NodeJS.ProcessEnv, clientSecretEnv: string | undefined, otlpHeadersEnv?: string): IdentitySecretSource {
  return async () => {
    const parsed = parse(await readFile(path, 'utf8'), `the identity secret file ${path}`);
    const secret = withClientSecret(parsed, clientSecretEnv, clientSecretEnv === undefined ? undefined : env[clientSecretEnv], 'environment variable');
    return withOtlpHeaders(secret, otlpHeadersEnv === undefined ? undefined : env[otlpHeadersEnv]);
  };
}

export function secretFromSecretsManager(read: SecretReader, secretId: string, clientSecretEnv: string | undefined, otlpHeadersEnv?: string): IdentitySecretSource {
  return async () => {
    const text = await read(secretId);
    if (text === undefined) throw new Error(`the identity secret ${secretId} has no string value`);
    const parsed = parse(text, `the identity secret ${secretId}`);
    const member = (name: string | undefined) => (name === undefined || typeof parsed[name] !== 'string' ? undefined : (parsed[name] as string));
    return withOtlpHeaders(withClientSecret(parsed, clientSecretEnv, member(clientSecretEnv), `member of the secret ${secretId}`), member(otlpHeadersEnv));
  };
}

/** The collector's headers are optional: a missing value only means none are sent. */
function withOtlpHeaders(secret: IdentitySecret, headers: string | undefined): IdentitySecret {
  return headers ? { ...secret, otlpHeaders: headers } : secret;
}

function parse(text: string, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${what} is not JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null) throw new Error(`${what} is not a JSON object`);
  const tokenKey = (parsed as { tokenKey?: unknown }).tokenKey;
  if (typeof tokenKey !== 'string' || tokenKey.length < 32) throw new Error(`${what} has no tokenKey of at least 32 characters`);
  return parsed as Record<string, unknown>;
}

/** A configured client secret that is missing is a setup mistake, said plainly (the IdP would only answer invalid_client). */
function withClientSecret(parsed: Record<string, unknown>, name: string | undefined, clientSecret: string | undefined, where: string): IdentitySecret {
  if (name !== undefined && !clientSecret) throw new Error(`identity.clientSecretEnv names ${name}, but that ${where} is empty or missing`);
  return { tokenKey: parsed.tokenKey as string, ...(clientSecret ? { clientSecret } : {}) };
}

/** A new random token key (what npm start writes once, and what the stack generates). */
export function newTokenKey(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * What the token key is used for, each with a key of its own (HKDF-SHA256): sealing the IdP
 * refresh tokens kept for re-checks (AES-256-GCM, bound to their session), and MACs (user-code
 * digests, the verification page's CSRF and confirmation tokens).
 */
export interface IdentityKeys {
  seal(plain: string, context: string): string;
  /** The plain text, or undefined when the sealed text was altered, or sealed for another context or key. */
  open(sealed: string, context: string): string | undefined;
  /** Base64url HMAC-SHA256 of `value` for one purpose. */
  mac(purpose: string, value: string): string;
  /** Constant-time check of a MAC presented by a client. */
  verifyMac(purpose: string, value: string, presented: string | undefined): boolean;
}

export function identityKeys(tokenKey: string): IdentityKeys {
  const derive = (info: string) => Buffer.from(hkdfSync('sha256', tokenKey, 'agent-gateway identity', info, 32));
  const sealKey = derive('seal idp refresh tokens');
  const macKey = derive('mac');
  const mac = (purpose: string, value: string) => createHmac('sha256', macKey).update(`${purpose}\n${value}`).digest('base64url');
  return {
    seal(plain, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', sealKey, iv);
      cipher.setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `v1.${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')}`;
    },
    open(sealed, context) {
      if (!sealed.startsWith('v1.')) return undefined;
      const raw = Buffer.from(sealed.slice(3), 'base64url');
      if (raw.length < 12 + 16) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', sealKey, raw.subarray(0, 12));
        decipher.setAAD(Buffer.from(context));
        decipher.setAuthTag(raw.subarray(raw.length - 16));
        return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString('utf8');
      } catch {
        return undefined;
      }
    },
    mac,
    verifyMac(purpose, value, presented) {
      if (presented === undefined) return false;
      const expected = Buffer.from(mac(purpose, value));
      const given = Buffer.from(presented);
      return expected.length === given.length && timingSafeEqual(expected, given);
    },
  };
}
