import { hashApiKey, looksLikeApiKey } from '../auth/key-material.ts';
import type { KeyCache } from '../auth/key-cache.ts';
import type { KeyRecord } from '../auth/key-table.ts';
import type { GatewayDeps } from '../deps.ts';
import { GatewayError } from '../errors.ts';
import { stateOf } from '../request-state.ts';
import type { GatewayMiddleware } from './types.ts';

/** Routes that need no key: the connection warm-up probe and the WebSocket refusal. */
const OPEN_ROUTES = new Set(['probe', 'responses_websocket']);
/** Routes that go on to an upstream (and so to its credentials); the model lists do not. */
const UPSTREAM_ROUTES = new Set(['messages', 'count_tokens', 'responses', 'responses_input_tokens', 'responses_compact']);

/**
 * Resolves the caller's issued key. Missing, malformed, unknown, expired and revoked keys all get
 * the same 401, so the answer tells an attacker nothing about which keys exist.
 */
export function authenticate(deps: GatewayDeps, cache: KeyCache): GatewayMiddleware {
  const lastTouched = new Map<string, number>();
  const intervalMs = deps.settings.lastUsedIntervalSeconds * 1000;
  const load = (hash: string) => deps.keys.get(hash);
  return {
    async before(request) {
      const state = stateOf(request.context);
      if (OPEN_ROUTES.has(state.route?.name ?? '')) return;
      const key = presentedKey(request.event.headers);
      if (key === undefined) throw invalidKey();
      const hash = hashApiKey(key);
      // The upstream credentials (a Secrets Manager read when not cached) are fetched while the key
      // is looked up, not after: on a cold start the two reads overlap. Only for a key of our
      // format on a route that reaches an upstream, so scanners and model lists read nothing.
      if (UPSTREAM_ROUTES.has(state.route?.name ?? '')) void deps.credentials.prefetch();
      let record: KeyRecord | undefined;
      try {
        record = await cache.get(hash, load);
      } catch (error) {
        throw new GatewayError('internal', 'The key store could not be read; try again.', { cause: error });
      }
      if (record?.malformed) {
        // Fail closed: the item cannot be trusted to say what the key may do. The client gets the
        // plain 401; the operator's log line (the error's cause) names the key and its bad attributes.
        const { kind, message, headers } = invalidKey();
        throw new GatewayError(kind, message, { headers, cause: new Error(`key ${record.id || '(no id)'} refused: its item has malformed attributes: ${record.malformed.join(', ')}`) });
      }
      if (!record || record.revoked || (record.expiresAt !== undefined && record.expiresAt * 1000 <= Date.now())) throw invalidKey();
      state.key = record;
      // Bounded-rate usage stamp: once per interval per instance, and the table's condition
      // keeps it to once per interval across instances. Written after the response: on a cold
      // start its signing and write would otherwise delay the first answer.
      const now = Date.now();
      if (now - (lastTouched.get(hash) ?? 0) >= intervalMs) {
        lastTouched.set(hash, now);
        state.afterResponse.push(() => deps.keys.touch(hash, new Date(now), deps.settings.lastUsedIntervalSeconds).catch(() => undefined));
      }
    },
  };
}

function invalidKey(): GatewayError {
  // Worded without "x-api-key": Claude Code answers any 401 mentioning it with "Not logged in ·
  // Please run /login", which sends users the wrong way (seen with the real CLI).
  return new GatewayError('authentication', 'Invalid API key: this gateway accepts only keys it issued (they start with gwk_), sent as a Bearer token.');
}

/**
 * The gateway key from `Authorization: Bearer` or `x-api-key`. Claude Code sends both when both
 * of its variables are set, and one may be a provider key: take whichever has our key format.
 */
export function presentedKey(headers: Record<string, string | undefined>): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '')?.[1];
  const apiKey = headers['x-api-key']?.trim();
  return [bearer, apiKey].find((candidate): candidate is string => candidate !== undefined && looksLikeApiKey(candidate));
}
