import { hash, randomBytes } from 'node:crypto';

/**
 * Issued API keys: `gwk_<secret>.<claims>.<check>`.
 * - `gwk_` + 43 base64url characters: 256 random bits. The prefix makes keys recognizable to
 *   people and secret scanners, and lets the gateway refuse anything else without a table lookup.
 * - `<claims>`: the constant base64url JSON `{"aud":"claude-gateway"}`. Claude Code (2.1.225 and
 *   later) shows a gateway's budget warnings only when its `ANTHROPIC_AUTH_TOKEN` is shaped like a
 *   token with that audience (three dot-separated parts, the middle one decoded, not verified);
 *   see docs/claude-code-budget-headers.md. It carries no secret and grants nothing.
 * - `<check>`: 8 base64url characters of SHA-256 over the rest, so a truncated or mistyped key is
 *   refused before any table lookup.
 * Keys issued before the claims existed (`gwk_` + 43 characters only) stay valid. Only the SHA-256
 * digest of the whole key is ever stored: the keys are high-entropy, so a slow password hash would
 * add latency and no security.
 */
export const KEY_PREFIX = 'gwk_';
const CLAIMS = Buffer.from('{"aud":"claude-gateway"}').toString('base64url');
const SECRET = /^gwk_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): string {
  return claimsShaped(KEY_PREFIX);
}

/** The public identifier of a key: safe to print, log and pass to `keys revoke`. */
export function generateKeyId(): string {
  return `key_${randomBytes(8).toString('hex')}`;
}

export function looksLikeApiKey(candidate: string): boolean {
  return SECRET.test(candidate) || isClaimsShaped(candidate, SECRET);
}

/**
 * Sign-in credentials (docs/sign-in.md), minted by lambda/identity and stored as digests only:
 * - access tokens `gwt_<secret>.<claims>.<check>`, the keys' shape, so that Claude Code shows a
 *   signed-in developer's budget warnings also when the token reaches it through `apiKeyHelper`;
 * - refresh tokens `gwr_<secret>`, only ever sent to the token and revocation endpoints.
 */
export const ACCESS_TOKEN_PREFIX = 'gwt_';
export const REFRESH_TOKEN_PREFIX = 'gwr_';
const ACCESS_SECRET = /^gwt_[A-Za-z0-9_-]{43}$/;
const REFRESH_TOKEN = /^gwr_[A-Za-z0-9_-]{43}$/;

export function generateAccessToken(): string {
  return claimsShaped(ACCESS_TOKEN_PREFIX);
}

export function looksLikeAccessToken(candidate: string): boolean {
  return isClaimsShaped(candidate, ACCESS_SECRET);
}

export function generateRefreshToken(): string {
  return `${REFRESH_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export function looksLikeRefreshToken(candidate: string): boolean {
  return REFRESH_TOKEN.test(candidate);
}

/**
 * Hex SHA-256 of a high-entropy secret (key, token, code): what the tables store and key items by.
 * One-shot `hash` rather than a createHash object: half the cost, and every request hashes its key
 * (once on npm start too: the handler takes over the preflight's check, lambda/gateway.ts).
 */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** Hex SHA-256 of the key: the table's partition key. */
export const hashApiKey = hashSecret;

function claimsShaped(prefix: string): string {
  const body = `${prefix}${randomBytes(32).toString('base64url')}.${CLAIMS}`;
  return `${body}.${check(body)}`;
}

function isClaimsShaped(candidate: string, secret: RegExp): boolean {
  const parts = candidate.split('.');
  return parts.length === 3 && secret.test(parts[0] as string) && parts[1] === CLAIMS && parts[2] === check(`${parts[0]}.${parts[1]}`);
}

function check(body: string): string {
  return hash('sha256', body, 'base64url').slice(0, 8);
}
