import type { LambdaFunctionURLEvent } from 'aws-lambda';
import type { DynamoKeyStore } from '../auth/key-store.ts';
import type { DynamoApi } from '../aws/dynamodb.ts';
import type { IdentityConfig } from '../config/identity-schema.ts';
import type { Router } from '../config/routing.ts';
import type { HandlerResponse } from '../deps.ts';
import { bodyTooLarge, GatewayError, toGatewayError } from '../errors.ts';
import type { IdentityDoor } from '../identity/index.ts';
import { bodyBytes } from '../identity/http.ts';
import { IdentityOperations } from '../identity/operators.ts';
import { AuditLog, type AuditEvent } from '../identity/store/audit.ts';
import { RateLimits } from '../identity/store/rate-limits.ts';
import { SessionStore } from '../identity/store/sessions.ts';
import { IdentityTable } from '../identity/store/table.ts';
import type { RequestState } from '../request-state.ts';
import type { UpstreamHealth } from '../upstream/upstream-health.ts';
import { PoolSpendCache } from '../usage/group-pools.ts';
import { Rollups } from '../usage/rollups.ts';
import { DynamoUsageStore } from '../usage/usage-store.ts';
import { callerOf, checkChange, type AccessDeps } from './access.ts';
import { apiRoute } from './api/routes.ts';
import { logout } from './api/session.ts';
import { ConsoleAssets } from './assets.ts';
import { ConsoleSessions } from './console-sessions.ts';
import { Created, Labels, type AdminContext } from './context.ts';
import { adminError, adminRequest, errorAnswer, json, type AdminRequest } from './http.ts';
import { consolePage, paragraph } from './pages.ts';
import { showLink, startLogin, useLink, type SignInDeps } from './sign-in.ts';

/**
 * The console room's one door (docs/console.md). The route table sends `/admin`,
 * `/admin/assets/*`, `/admin/login*` and `/admin/api/*` here; nothing else of the gateway imports
 * this room, and lambda/handler.ts loads it on the first such request.
 */
export interface AdminDoor {
  serve(event: LambdaFunctionURLEvent, state: RequestState): Promise<HandlerResponse>;
}

export interface AdminDoorOptions {
  /** The key table (the operator's operations: lambda/auth/key-operations.ts). */
  keys: DynamoKeyStore;
  dynamo: DynamoApi;
  /** Console sessions, one-time links, the audit trail and people (absent: Bearer admin keys only, no audit trail). */
  identityTableName?: string;
  /** The usage rollups (absent: no usage views). */
  statsTableName?: string;
  /** The usage table: a person's spend against their caps (absent: not shown). */
  usageTableName?: string;
  identityConfig?: IdentityConfig;
  /** Sign-in (the config's `identity`): console sign-in through the IdP, and sign-in tokens as Bearer. */
  identity?: IdentityDoor;
  router: Router;
  /** This instance's view of its upstreams. */
  health: UpstreamHealth;
  /** The public origin when `identity.publicUrl` is not set (as the identity room's). */
  originOf(event: LambdaFunctionURLEvent): string;
  log: (line: string) => void;
  now?: () => number;
  /** When this instance started (epoch ms). */
  startedAt?: number;
  /** How long gateway instances trust a key they looked up (GATEWAY_KEY_CACHE_SECONDS): when a revocation takes effect. */
  keyCacheSeconds: number;
  /** Where the built page is (tests). */
  assets?: ConsoleAssets;
}

export function createAdminDoor(options: AdminDoorOptions): AdminDoor {
  const now = options.now ?? Date.now;
  const assets = options.assets ?? new ConsoleAssets();
  const table = options.identityTableName ? new IdentityTable(options.identityTableName, options.dynamo) : undefined;
  const sessions = table && new ConsoleSessions(table);
  const families = table && new SessionStore(table);
  const people = table && options.identityConfig ? new IdentityOperations(table.name, options.dynamo, options.log) : undefined;
  const audit = table && new AuditLog(table, options.log);
  const rollups = options.statsTableName ? new Rollups(options.statsTableName, options.dynamo) : undefined;
  const usage = options.usageTableName ? new DynamoUsageStore(options.usageTableName, options.dynamo) : undefined;
  const pools = options.statsTableName ? new PoolSpendCache(options.statsTableName, options.dynamo) : undefined;
  const labels = new Labels(options.keys, people);
  const publicOrigin = options.identityConfig?.publicUrl === undefined ? undefined : new URL(options.identityConfig.publicUrl).origin;
  const startedAt = options.startedAt ?? now();
  const access: AccessDeps = {
    keys: options.keys,
    sessions,
    families,
    identity: options.identity,
    adminGroups: options.identityConfig?.adminGroups ?? [],
    viewerGroups: options.identityConfig?.viewerGroups ?? [],
    now,
  };
  const signIn: SignInDeps | undefined = sessions && table && audit && { sessions, rates: new RateLimits(table), audit, identity: options.identity, css: () => assets.manifest().css, now };

  const record = (event: AuditEvent) =>
    audit ? audit.record(event, now()) : Promise.resolve(options.log(JSON.stringify({ timestamp: new Date(now()).toISOString(), level: 'info', msg: 'audit', ...event })));

  async function api(request: AdminRequest): Promise<HandlerResponse> {
    const caller = await callerOf(request, access);
    const route = apiRoute(request.method, request.path.slice('/admin/api'.length));
    const context: AdminContext = {
      request,
      caller,
      now,
      keys: options.keys,
      rollups,
      usage,
      stats: pools && { tableName: options.statsTableName as string, read: (groups, at) => pools.spend(groups, at) },
      people,
      audit,
      identityConfig: options.identityConfig,
      router: options.router,
      health: options.health,
      startedAt,
      keyCacheSeconds: options.keyCacheSeconds,
      labels,
      record: (event) => record({ ...event, actor: caller.actor, ip: request.ip, via: caller.via === 'session' ? 'console' : 'admin API' }),
    };
    if (route.logout) {
      if (caller.via === 'session') checkChange(request, { ...caller, role: 'admin' });
      return logout(context, async (cookie) => {
        const ended = await sessions?.end(cookie, now());
        if (ended?.family) await families?.revoke(ended.family, 'sign_out', now());
      });
    }
    if (route.change) checkChange(request, caller);
    const answer = await route.run(context, ...route.params);
    if (answer instanceof Created) return json(request.origin, 201, answer.body);
    if (isResponse(answer)) return answer;
    return json(request.origin, 200, answer);
  }

  return {
    async serve(event, state) {
      const request = adminRequest(event, publicOrigin ?? options.originOf(event), state);
      const path = request.path;
      const isApi = path.startsWith('/admin/api/') || path === '/admin/api';
      try {
        const limit = state.route?.maxBodyBytes;
        const size = bodyBytes(event);
        if (limit !== undefined && size > limit) throw bodyTooLarge(size, limit);
        if (isApi) return await api(request);
        if (path === '/admin/login') return await (signIn ? startLogin(signIn, request, event, state) : noSessions(request));
        if (path === '/admin/login/link') {
          if (!signIn) return noSessions(request);
          if (request.method === 'GET') return showLink(signIn, request);
          if (request.method === 'POST') return await useLink(signIn, request);
          throw adminError.methodNotAllowed(request.method, ['GET', 'POST']);
        }
        if (request.method !== 'GET' && request.method !== 'HEAD') throw adminError.methodNotAllowed(request.method, ['GET']);
        const answer = assets.answer(path, event.headers['accept-encoding'], request.origin);
        if (answer) return answer;
        throw adminError.notFound();
      } catch (error) {
        const failure = toGatewayError(error);
        if (failure.status >= 500) state.cause = error instanceof Error ? error.message : String(error);
        if (isApi || failure.status < 500) return errorAnswer(request.origin, failure);
        return consolePageOrJson(request, failure);
      }
    },
  };

  function noSessions(request: AdminRequest): HandlerResponse {
    return consolePage(request.origin, assets.manifest().css, 'Console sign-in is not available', paragraph('This gateway has no identity table for console sessions (GATEWAY_IDENTITY_TABLE). Use the admin API with an admin key instead: npm run keys -- create --name NAME --role admin.'), 503);
  }

  function consolePageOrJson(request: AdminRequest, failure: GatewayError): HandlerResponse {
    try {
      return consolePage(request.origin, assets.manifest().css, 'Something went wrong', paragraph('The console could not answer. Try again in a moment; the gateway\'s log has the reason.'), failure.status);
    } catch {
      return errorAnswer(request.origin, failure);
    }
  }
}

function isResponse(value: unknown): value is HandlerResponse {
  return typeof value === 'object' && value !== null && 'statusCode' in value && 'headers' in value && 'body' in value;
}
