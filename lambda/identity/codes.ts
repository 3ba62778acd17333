import { createHash, randomBytes } from 'node:crypto';

/** An opaque, single-use secret of 256 random bits (device codes, `state`, PKCE verifiers, nonces, cookies). */
export function randomSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** A session (token family) id: not a secret (operators see it), but unguessable. */
export function newSessionId(): string {
  return `ses_${randomBytes(16).toString('base64url')}`;
}

/**
 * User codes use RFC 8628 §6.1's base-20 alphabet (no vowels, so no words; no look-alike
 * digits): 8 characters, `WDJB-MJHT`, 20^8 ≈ 2^34.6 codes. With 10 entries per IP per 10 minutes
 * and a 10-minute life, guessing a live code is out of reach (docs/sign-in-reference.md, "Lifetimes and limits").
 */
const ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const LENGTH = 8;

export function newUserCode(): string {
  let code = '';
  while (code.length < LENGTH) {
    for (const byte of randomBytes(LENGTH * 2)) {
      // 240 = 12 * 20: bytes above it would favour the first letters.
      if (byte < 240 && code.length < LENGTH) code += ALPHABET[byte % 20];
    }
  }
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** A user code as typed (any case, spaces or dashes anywhere) in its canonical form, or undefined when it cannot be one. */
export function normalizeUserCode(typed: string | undefined): string | undefined {
  if (typed === undefined || typed.length > 64) return undefined;
  const letters = typed.toUpperCase().replace(/[\s-]/g, '');
  if (letters.length !== LENGTH || [...letters].some((letter) => !ALPHABET.includes(letter))) return undefined;
  return `${letters.slice(0, 4)}-${letters.slice(4)}`;
}

/** The PKCE S256 challenge of a verifier (RFC 7636 §4.2). */
export function codeChallenge(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}
