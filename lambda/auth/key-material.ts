import { createHash, randomBytes } from 'node:crypto';

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
  const body = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}.${CLAIMS}`;
  return `${body}.${check(body)}`;
}

/** The public identifier of a key: safe to print, log and pass to `keys revoke`. */
export function generateKeyId(): string {
  return `key_${randomBytes(8).toString('hex')}`;
}

export function looksLikeApiKey(candidate: string): boolean {
  if (SECRET.test(candidate)) return true;
  const parts = candidate.split('.');
  return parts.length === 3 && SECRET.test(parts[0] as string) && parts[1] === CLAIMS && parts[2] === check(`${parts[0]}.${parts[1]}`);
}

/** Hex SHA-256 of the key: the table's partition key. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

function check(body: string): string {
  return createHash('sha256').update(body).digest('base64url').slice(0, 8);
}
