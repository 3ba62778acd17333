import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { KeyCache } from '../auth/key-cache.ts';
import { hashSecret } from '../auth/key-material.ts';
import type { DynamoApi } from '../aws/dynamodb.ts';
import type { SpendReaders } from '../usage/spend-standing.ts';
import type { IdentityConfig } from '../config/identity-schema.ts';
import type { HandlerResponse } from '../deps.ts';
import { bodyTooLarge } from '../errors.ts';
import type { RequestState } from '../request-state.ts';
import type { IdentityEndpoint } from '../routes.ts';
import { callback } from './callback.ts';
import type { IdentityContext, SignInCompletion } from './context.ts';
import { deviceAuthorization } from './device-authorization.ts';
import { deviceSignIn } from './device-sign-in.ts';
import { helperScript } from './helper-script.ts';
import { bodyBytes, identityRequest, type IdentityRequest } from './http.ts';
import { managedSettings } from './managed-settings.ts';
import { metadata } from './metadata.ts';
import { oauthUsage } from './oauth-usage.ts';
import { OidcRelyingParty } from './oidc-client.ts';
import { messagePage } from './pages.ts';
import { parseOverrides, resolvePolicy, type PersonOverrides } from './policy.ts';
import type { Person, PersonPolicy, Principal } from './principal.ts';
import { revocation } from './revocation.ts';
import { startSignIn } from './sign-in.ts';
import { identityKeys, type IdentityKeys, type IdentitySecret, type IdentitySecretSource } from './secrets.ts';
import { AuditLog } from './store/audit.ts';
import { DeviceGrantStore } from './store/device-grants.ts';
import { PeopleStore } from './store/people.ts';
import { RateLimits } from './store/rate-limits.ts';
import { SessionStore } from './store/sessions.ts';
import { IdentityTable } from './store/table.ts';
import { OtlpForwarder, telemetry } from './telemetry.ts';
import { tokenEndpoint } from './token-endpoint.ts';
import { postDevicePage, showDevicePage } from './verification-page.ts';

/**
 * The sign-in room's one door (docs/sign-in.md, docs/architecture.md). The request path sees only
 * this: the route table sends identity paths to `serve`; authenticate resolves `gwt_` bearers
 * with `principal` and the owners of keys tied to a person with `person`; policy (models, caps,
 * managed settings) comes from `policyFor`.
 */
export interface IdentityDoor {
  /** Answers an identity path (lambda/routes.ts, IDENTITY_PATHS). */
  serve(event: LambdaFunctionURLEvent, state: RequestState): Promise<HandlerResponse>;
  /** A sign-in access token (`gwt_…`) -> who it is, or undefined (unknown, expired, revoked: 401). */
  principal(token: string): Promise<Principal | undefined>;
  /** A person by IdP subject, as of their last sign-in or refresh (the owner of a key tied to them). */
  person(sub: string): Promise<Person | undefined>;
  /**
   * What the principal's person may do: models, caps, pools, managed settings (policy.ts, from the
   * config and their overrides, as of this instance's person cache). A principal without a
   * person has no policy: nothing beyond a key's own limits.
   */
  policyFor(principal: Principal): Promise<PersonPolicy | undefined>;
  /**
   * Sends the browser through the IdP for another room (`purpose` names the completion given
   * in `completions`: the console's sign-in). The round trip comes back to /oauth/callback.
   */
  startSignIn(event: LambdaFunctionURLEvent, state: RequestState, purpose: string): Promise<HandlerResponse>;
}

export type { PersonPolicy };

export interface IdentityDoorOptions {
  config: IdentityConfig;
  /** The identity table (lambda/identity/identity-table.ts) and the client to reach it. */
  tableName: string;
  dynamo: DynamoApi;
  secret: IdentitySecretSource;
  /** The public origin when `identity.publicUrl` is not set (Lambda: https:// + the domain AWS gives; npm start: where it listens). */
  originOf(event: LambdaFunctionURLEvent): string;
  /** Structured log lines (audit events). */
  log: (line: string) => void;
  /** How long an instance trusts a looked-up session or person (revocations elsewhere take effect within it). */
  cacheSeconds: number;
  /** Epoch ms; tests move it. */
  now?: () => number;
  /** IdP round trips of other rooms (the console's sign-in), by purpose. */
  completions?: Record<string, SignInCompletion>;
  /** The usage counters, for `/first/api/oauth/usage` (absent: nothing is metered). */
  spend?: SpendReaders;
  /** How telemetry reaches the collector (`identity.otlp`); the global fetch unless given. */
  fetch?: typeof fetch;
}

type Endpoint = (context: IdentityContext, request: IdentityRequest) => Promise<HandlerResponse> | HandlerResponse;

/** Each endpoint's module; a new identity endpoint adds its path in routes.ts and its module here. */
const ENDPOINTS: Record<IdentityEndpoint, Partial<Record<string, Endpoint>>> = {
  metadata: { GET: (_context, request) => metadata(request) },
  device_authorization: { POST: deviceAuthorization },
  token: { POST: tokenEndpoint },
  revoke: { POST: revocation },
  device: { GET: showDevicePage, POST: postDevicePage },
  callback: { GET: callback },
  helper: { GET: (_context, request) => helperScript(request) },
  managed_settings: { GET: managedSettings },
  usage: { GET: oauthUsage },
  telemetry: { POST: telemetry },
};

/** Endpoints a browser shows: their failures are pages, not JSON. */
const PAGES: ReadonlySet<IdentityEndpoint> = new Set(['device', 'callback']);

/** What the person cache holds per `sub`: who they are as of their last sign-in, and their overrides. */
interface CachedPerson {
  person: Person;
  overrides: PersonOverrides | undefined;
}

/** What the session cache holds per access token. */
interface CachedSession {
  principal: Principal;
  /** Epoch s: the token's own end (the cache never outlives it). */
  expiresAt: number;
}

export function createIdentityDoor(options: IdentityDoorOptions): IdentityDoor {
  const table = new IdentityTable(options.tableName, options.dynamo);
  const now = options.now ?? Date.now;
  const sessions = new KeyCache<CachedSession>(options.cacheSeconds);
  const people = new KeyCache<CachedPerson>(options.cacheSeconds);
  let secret: Promise<IdentitySecret> | undefined;
  let keys: IdentityKeys | undefined;
  const readSecret = () => {
    secret ??= options.secret().catch((error: unknown) => {
      // Not kept: the next request reads it again.
      secret = undefined;
      throw error;
    });
    return secret;
  };
  const context: IdentityContext = {
    config: options.config,
    grants: new DeviceGrantStore(table),
    sessions: new SessionStore(table),
    people: new PeopleStore(table),
    audit: new AuditLog(table, options.log),
    rates: new RateLimits(table),
    idp: new OidcRelyingParty(options.config, async () => (await readSecret()).clientSecret),
    async keys() {
      keys ??= identityKeys((await readSecret()).tokenKey);
      return keys;
    },
    now,
    forgetSession: (id) => sessions.deleteWhere((entry) => entry.principal.sessionId === id),
    completions: { ...options.completions, device: deviceSignIn },
    policyFor: (principal) => policyFor(principal),
    ...(options.spend ? { spend: options.spend } : {}),
    ...(options.config.otlp
      ? {
          telemetry: new OtlpForwarder({
            endpoint: options.config.otlp.endpoint,
            // A secret that cannot be read sends no headers; the collector then says so, and that is logged.
            headers: async () => (options.config.otlp?.headersEnv === undefined ? undefined : (await readSecret().catch(() => undefined))?.otlpHeaders),
            fetch: options.fetch ?? fetch,
            log: options.log,
          }),
        }
      : {}),
  };
  const publicOrigin = options.config.publicUrl === undefined ? undefined : new URL(options.config.publicUrl).origin;

  const cachedPerson = (sub: string) =>
    people.get(sub, async (key) => {
      const record = await context.people.get(key);
      if (!record) return undefined;
      const person: Person = { sub: record.sub, groups: record.groups, ...(record.email ? { email: record.email } : {}), ...(record.name ? { name: record.name } : {}) };
      return { person, overrides: parseOverrides(record.overrides) };
    });

  async function policyFor(principal: Principal): Promise<PersonPolicy | undefined> {
    const person = principal.person;
    if (!person) return undefined;
    // A session's groups are those of its token (as of the last sign-in or refresh); a key's owner's, of their record.
    return resolvePolicy(options.config, person, (await cachedPerson(person.sub))?.overrides);
  }

  const loadSession = async (hash: string): Promise<CachedSession | undefined> => {
    const access = await context.sessions.getAccess(hash, now());
    if (!access) return undefined;
    const session = await context.sessions.get(access.family, now());
    if (!session || session.revokedAt !== undefined) return undefined;
    return { principal: { kind: 'session', person: access.person, sessionId: access.family }, expiresAt: access.expiresAt };
  };

  return {
    async serve(event, state) {
      const endpoint = state.route?.identity?.endpoint;
      const request = identityRequest(event, publicOrigin ?? options.originOf(event), state);
      const handler = endpoint === undefined ? undefined : ENDPOINTS[endpoint]?.[request.method];
      if (!handler) return messagePage(request.origin, 'Not found', 'There is nothing here.', 404);
      // npm start refused it before reading (gateway.ts preflight); Lambda hands over whole requests.
      const limit = state.route?.maxBodyBytes;
      const size = bodyBytes(event);
      if (limit !== undefined && size > limit) throw bodyTooLarge(size, limit);
      if (!PAGES.has(endpoint as IdentityEndpoint)) return handler(context, request);
      try {
        return await handler(context, request);
      } catch (error) {
        // Logged as the request's cause (never shown): the person sees a page, not JSON.
        state.cause = error instanceof Error ? error.message : String(error);
        return messagePage(request.origin, 'Something went wrong', 'The sign-in could not continue. Start again from your terminal in a moment.', 500);
      }
    },

    async principal(token) {
      const cached = await sessions.get(hashSecret(token), loadSession);
      return cached && cached.expiresAt * 1000 > now() ? cached.principal : undefined;
    },

    async person(sub) {
      return (await cachedPerson(sub))?.person;
    },

    policyFor,

    async startSignIn(event, state, purpose) {
      if (!context.completions[purpose]) throw new Error(`no sign-in completion for "${purpose}"`);
      return startSignIn(context, identityRequest(event, publicOrigin ?? options.originOf(event), state), purpose, {});
    },
  };
}
