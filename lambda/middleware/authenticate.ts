import { presentedCredential } from '../auth/credential.ts';
import { keyRefusal, missingCredential } from '../auth/key-refusal.ts';
import { hashApiKey } from '../auth/key-material.ts';
import type { KeyCache } from '../auth/key-cache.ts';
import type { KeyRecord } from '../auth/key-table.ts';
import type { GatewayDeps } from '../deps.ts';
import { GatewayError } from '../errors.ts';
import type { Person } from '../identity/principal.ts';
import { stateOf, type RequestState } from '../request-state.ts';
import type { GatewayMiddleware } from './types.ts';

/** Routes that need no key: the connection warm-up probe and the WebSocket refusal. */
const OPEN_ROUTES = new Set(['probe', 'responses_websocket']);
/** Routes that go on to an upstream (and so to its credentials); the model lists do not. */
const UPSTREAM_ROUTES = new Set(['messages', 'count_tokens', 'responses', 'responses_input_tokens', 'responses_compact']);
/** Routes that apply a person's policy (models, caps): those and the model lists. */
const POLICY_ROUTES = new Set([...UPSTREAM_ROUTES, 'messages_models', 'responses_models']);

/**
 * Resolves who the caller is: an issued key (`gwk_`), or a signed-in session's access token
 * (`gwt_`, through the identity room's door). A refused key's 401 says why (auth/key-refusal.ts),
 * telling nothing about which keys exist to a caller who holds none; every one carries
 * `x-should-retry: false`, so Claude Code asks for a new sign-in at once instead of retrying.
 */
export function authenticate(deps: GatewayDeps, cache: KeyCache): GatewayMiddleware {
  const lastTouched = new Map<string, number>();
  const intervalMs = deps.settings.lastUsedIntervalSeconds * 1000;
  const load = (hash: string) => deps.keys.get(hash);
  return {
    async before(request) {
      const state = stateOf(request.context);
      const route = state.route;
      // The console checks its own callers (a session cookie, or an admin key or token): lambda/admin/access.ts.
      if (OPEN_ROUTES.has(route?.name ?? '') || route?.name === 'admin' || (route?.identity !== undefined && !route.identity.bearer)) return;
      const credential = presentedCredential(request.event.headers);
      if (credential === undefined) throw keyRefusal(missingCredential(request.event.headers));
      // The upstream credentials (a Secrets Manager read when not cached) are fetched while the
      // caller is looked up, not after: on a cold start the two reads overlap. Only for a
      // credential of our format on a route that reaches an upstream, so scanners and model lists read nothing.
      if (UPSTREAM_ROUTES.has(route?.name ?? '')) void deps.credentials.prefetch();
      if (credential.kind === 'session') {
        await signedIn(state, credential.value, deps);
        return policyOf(state, deps);
      }
      const hash = hashApiKey(credential.value);
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
      state.principal = { kind: 'key', key: record };
      if (record.owner !== undefined) {
        state.principal.person = await ownerOf(record.owner, deps);
        await policyOf(state, deps);
      }
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

async function signedIn(state: RequestState, token: string, deps: GatewayDeps): Promise<void> {
  // A sign-in token where sign-in is not configured: this gateway did not issue it.
  if (!deps.identity) throw keyRefusal('unknown');
  let principal;
  try {
    principal = await deps.identity.principal(token);
  } catch (error) {
    throw new GatewayError('internal', 'The sign-in store could not be read; try again.', { cause: error });
  }
  if (!principal) throw new GatewayError('authentication', 'Your sign-in has expired or was revoked: sign in again (Claude Code: /login; the login helper: gateway-login <host>).');
  state.principal = principal;
}

/** The person's policy, on the routes that apply it (read from the sign-in room; failing closed when it cannot be). */
async function policyOf(state: RequestState, deps: GatewayDeps): Promise<void> {
  if (!deps.identity || !state.principal?.person || !POLICY_ROUTES.has(state.route?.name ?? '')) return;
  try {
    const policy = await deps.identity.policyFor(state.principal);
    if (policy) state.policy = policy;
  } catch (error) {
    throw new GatewayError('internal', 'The sign-in store could not be read; try again.', { cause: error });
  }
}

/** A key tied to a person acts for them, with their groups as of their last sign-in. */
async function ownerOf(sub: string, deps: GatewayDeps): Promise<Person> {
  if (!deps.identity) return { sub, groups: [] };
  try {
    return (await deps.identity.person(sub)) ?? { sub, groups: [] };
  } catch (error) {
    throw new GatewayError('internal', 'The sign-in store could not be read; try again.', { cause: error });
  }
}
