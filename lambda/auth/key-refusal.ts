import { GatewayError } from '../errors.ts';
import type { KeyRecord } from './key-table.ts';
import { ACCESS_TOKEN_PREFIX, KEY_PREFIX } from './key-material.ts';

/**
 * Why a request's key is refused, and the 401 that says so. What it tells depends only on what
 * the caller holds: the first four come from the headers alone (no lookup), `unknown` is the same
 * for every key this gateway never issued, and only the holder of a once-valid key learns that it
 * was revoked, has expired or has a key-store item the gateway cannot trust (and its public id, to
 * ask the operator about it).
 */
export type KeyProblem = 'missing' | 'not_bearer' | 'not_issued' | 'damaged' | 'unknown' | 'revoked' | 'expired' | 'unusable';

const FIX = "ask the gateway's operator for a new one";

/**
 * Why a request presents no credential of ours (auth/credential.ts found none in `Authorization:
 * Bearer` or `x-api-key`): nothing at all, an Authorization header that is not a Bearer token, a
 * credential of our shape cut short or mistyped (its checksum fails), or something else entirely
 * (a provider's key).
 */
export function missingCredential(headers: Record<string, string | undefined>): KeyProblem {
  const authorization = headers.authorization?.trim();
  const bearer = authorization === undefined ? undefined : /^Bearer\s+(\S+)$/i.exec(authorization)?.[1];
  const apiKey = headers['x-api-key']?.trim() || undefined;
  const candidates = [bearer, apiKey].filter((candidate): candidate is string => candidate !== undefined);
  if (candidates.some((candidate) => candidate.startsWith(KEY_PREFIX) || candidate.startsWith(ACCESS_TOKEN_PREFIX))) return 'damaged';
  if (candidates.length > 0) return 'not_issued';
  return authorization ? 'not_bearer' : 'missing';
}

/**
 * The 401 for a refused key, marked final (x-should-retry: false). Never worded with "x-api-key":
 * Claude Code answers a 401 mentioning it with "Not logged in · Please run /login" (2.1.332) and
 * hides the message.
 */
export function keyRefusal(problem: KeyProblem, record?: Pick<KeyRecord, 'id' | 'expiresAt'>, cause?: Error): GatewayError {
  return new GatewayError('authentication', MESSAGES[problem](record), cause === undefined ? {} : { cause });
}

const MESSAGES: Record<KeyProblem, (record?: Pick<KeyRecord, 'id' | 'expiresAt'>) => string> = {
  // Also what a signed-in client sends once its token is gone (Codex after gateway-login fails): name both ways in.
  missing: () => `No API key was sent: send the key this gateway issued (${KEY_PREFIX}...) as a Bearer token, or sign in if the gateway has sign-in (Claude Code's /login, gateway-login for the other clients).`,
  not_bearer: () => `The Authorization header is not a Bearer token: send the key as "Authorization: Bearer ${KEY_PREFIX}...".`,
  // Worded to stay true when other credentials (sign-in tokens) exist besides gwk_ keys.
  not_issued: () => `The API key sent is not a credential this gateway issued (its keys start with ${KEY_PREFIX}); a provider's own API key does not work here.`,
  damaged: () => `The gateway key sent is incomplete or mistyped (its checksum does not match): copy the whole key, from ${KEY_PREFIX} to its end.`,
  unknown: () => 'This gateway did not issue the key sent: a key works only on the gateway that issued it (npm start and each deployed stack keep their own keys).',
  revoked: (record) => `Key ${record?.id} was revoked; ${FIX}.`,
  expired: (record) => `Key ${record?.id} expired at ${new Date((record?.expiresAt ?? 0) * 1000).toISOString()}; ${FIX}.`,
  unusable: (record) => `Key ${record?.id || '(no id)'} cannot be used: its entry in the key store is not valid; ask the gateway's operator to fix it or issue a new key.`,
};
