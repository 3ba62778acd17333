import { hashApiKey } from '../auth/key-material.ts';
import { keyRefusal, presentedCredential } from '../auth/key-refusal.ts';
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
 * Resolves the caller's issued key. A refused key's 401 says why (auth/key-refusal.ts), telling
 * nothing about which keys exist to a caller who holds none.
 */
export function authenticate(deps: GatewayDeps, cache: KeyCache): GatewayMiddleware {
  const lastTouched = new Map<string, number>();
  const intervalMs = deps.settings.lastUsedIntervalSeconds * 1000;
  const load = (hash: string) => deps.keys.get(hash);
  return {
    async before(request) {
      const state = stateOf(request.context);
      if (OPEN_ROUTES.has(state.route?.name ?? '')) return;
      const presented = presentedCredential(request.event.headers);
      if ('problem' in presented) throw keyRefusal(presented.problem);
      const { key } = presented;
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
        // Fail closed: the item cannot be trusted to say what the key may do. The operator's log
        // line (the error's cause) names the key and its bad attributes.
        throw keyRefusal('unusable', record, new Error(`key ${record.id || '(no id)'} refused: its item has malformed attributes: ${record.malformed.join(', ')}`));
      }
      if (!record) throw keyRefusal('unknown');
      if (record.revoked || (record.expiresAt !== undefined && record.expiresAt * 1000 <= Date.now())) throw keyRefusal(record.revoked ? 'revoked' : 'expired', record);
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
