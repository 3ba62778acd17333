import { createHash, randomBytes } from 'node:crypto';

/**
 * Issued API keys: `gwk_` + 43 base64url characters (256 random bits). The prefix makes keys
 * recognizable to people and secret scanners, and lets the gateway refuse anything else without
 * a table lookup. Only the SHA-256 digest is ever stored: the keys are high-entropy, so a slow
 * password hash would add latency and no security.
 */
export const KEY_PREFIX = 'gwk_';
const KEY_PATTERN = /^gwk_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** The public identifier of a key: safe to print, log and pass to `keys revoke`. */
export function generateKeyId(): string {
  return `key_${randomBytes(8).toString('hex')}`;
}

export function looksLikeApiKey(candidate: string): boolean {
  return KEY_PATTERN.test(candidate);
}

/** Hex SHA-256 of the key: the table's partition key. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
