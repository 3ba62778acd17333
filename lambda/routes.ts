import { GatewayError, printable } from './errors.ts';

/** The two wire formats clients speak; they pick error envelopes and stream framing. */
export type Family = 'messages' | 'responses';

export type RouteName =
  | 'messages'
  | 'count_tokens'
  | 'messages_models'
  | 'probe'
  | 'responses'
  | 'responses_input_tokens'
  | 'responses_compact'
  | 'responses_models'
  | 'responses_websocket'
  /** A sign-in path (only when the config has `identity`): the identity room answers it. */
  | 'identity'
  /** The console and its API (`/admin…`): the admin room answers it, and checks its callers itself. */
  | 'admin';

/** The sign-in room's endpoints; lambda/identity/index.ts maps each to its module. */
export type IdentityEndpoint = 'metadata' | 'device_authorization' | 'token' | 'revoke' | 'device' | 'callback' | 'managed_settings' | 'usage' | 'telemetry' | 'helper';

export interface Route {
  name: RouteName;
  family: Family;
  /** Identity routes: which endpoint, and whether it needs a bearer (the OAuth endpoints and pages do not). */
  identity?: { endpoint: IdentityEndpoint; bearer: boolean };
  /** The largest body the route takes when smaller than the gateway's limit (unauthenticated forms). */
  maxBodyBytes?: number;
}

/** Unauthenticated sign-in requests carry at most this much body (the form posts). */
export const FORM_BODY_BYTES = 16 * 1024;

/** Telemetry posts (OTLP/HTTP, bearer) carry at most this much body. */
export const TELEMETRY_BODY_BYTES = 1024 * 1024;

type MethodTable = Readonly<Record<string, RouteName>>;

/** Path (after the prefix and its `/v1`) -> method -> route. */
const TABLE: Record<'first' | 'second', Readonly<Record<string, MethodTable>>> = {
  first: {
    // Claude Code warms the connection with `HEAD <base>`; answer it cheaply.
    '': { HEAD: 'probe', GET: 'probe' },
    '/messages': { POST: 'messages' },
    '/messages/count_tokens': { POST: 'count_tokens' },
    '/models': { GET: 'messages_models' },
    // Claude Code's start-up probe of a gateway (its LLM-gateway protocol).
    '/api/hello': { HEAD: 'probe', GET: 'probe' },
  },
  second: {
    '': { HEAD: 'probe', GET: 'probe' },
    '/responses': { POST: 'responses', GET: 'responses_websocket' },
    '/responses/input_tokens': { POST: 'responses_input_tokens' },
    '/responses/compact': { POST: 'responses_compact' },
    '/models': { GET: 'responses_models' },
  },
};

/**
 * Sign-in paths, relative to the host (docs/sign-in-reference.md, "Endpoints"). RFC 8414 metadata is
 * served where each kind of client looks: `<base>/.well-known/…` (Claude Code, base `/first`),
 * the RFC's `/.well-known/oauth-authorization-server[/first]`. The OAuth endpoints are also
 * served under `/first`, where Claude Code sends them when the metadata's URLs are not on the
 * origin it was given (a gateway reached under another name, e.g. localhost vs 127.0.0.1).
 */
const OPEN = { bearer: false } as const;
const BEARER = { bearer: true } as const;
const TELEMETRY = { endpoint: 'telemetry', bearer: true, maxBodyBytes: TELEMETRY_BODY_BYTES } as const;
/** An identity path's entry: its endpoint, whether a bearer is needed, its body allowance (open routes: FORM_BODY_BYTES). */
interface IdentityPath {
  endpoint: IdentityEndpoint;
  bearer: boolean;
  maxBodyBytes?: number;
}
const IDENTITY_PATHS: Readonly<Record<string, Readonly<Record<string, IdentityPath>>>> = {
  '/.well-known/oauth-authorization-server': { GET: { endpoint: 'metadata', ...OPEN } },
  '/.well-known/oauth-authorization-server/first': { GET: { endpoint: 'metadata', ...OPEN } },
  '/first/.well-known/oauth-authorization-server': { GET: { endpoint: 'metadata', ...OPEN } },
  '/oauth/device_authorization': { POST: { endpoint: 'device_authorization', ...OPEN } },
  '/first/oauth/device_authorization': { POST: { endpoint: 'device_authorization', ...OPEN } },
  '/oauth/token': { POST: { endpoint: 'token', ...OPEN } },
  '/first/oauth/token': { POST: { endpoint: 'token', ...OPEN } },
  '/oauth/revoke': { POST: { endpoint: 'revoke', ...OPEN } },
  '/first/oauth/revoke': { POST: { endpoint: 'revoke', ...OPEN } },
  '/device': { GET: { endpoint: 'device', ...OPEN }, POST: { endpoint: 'device', ...OPEN } },
  '/oauth/callback': { GET: { endpoint: 'callback', ...OPEN } },
  // Claude Code's fixed paths under its gateway base (`<host>/first`): policy, usage, telemetry.
  '/first/managed/settings': { GET: { endpoint: 'managed_settings', ...BEARER } },
  '/first/api/oauth/usage': { GET: { endpoint: 'usage', ...BEARER } },
  '/first/v1/metrics': { POST: TELEMETRY },
  '/first/v1/logs': { POST: TELEMETRY },
  '/first/v1/traces': { POST: TELEMETRY },
  // The login helper script (docs/sign-in.md): a GET without a body.
  '/login/helper.mjs': { GET: { endpoint: 'helper', ...OPEN, maxBodyBytes: 0 } },
};

/** Endpoints whose errors are OAuth error bodies (RFC 6749 §5.2), not a model API's envelope. */
const OAUTH_ENDPOINTS: ReadonlySet<IdentityEndpoint> = new Set(['metadata', 'device_authorization', 'token', 'revoke']);

/** Whether a path is one of the OAuth endpoints (its refusals are rendered as OAuth errors). */
export function speaksOAuth(rawPath: string): boolean {
  const path = normalizePath(rawPath)?.replace(/(.)\/+$/, '$1');
  const methods = path === undefined ? undefined : IDENTITY_PATHS[path];
  return methods !== undefined && Object.values(methods).some((entry) => OAUTH_ENDPOINTS.has(entry.endpoint));
}

const PREFIX = /^\/(first|second)(\/.*)?$/;
/**
 * The console (docs/console.md): the page, its assets, sign-in and the admin API. Bodies (JSON
 * changes, the sign-in form) are small: the unauthenticated allowance, checked before the caller is.
 */
const ADMIN_PATH = /^\/admin(\/.*)?$/;
const FAMILY_PREFIX = /^\/+first(\/|$)/i;

/**
 * What each client appends to its base address (Claude Code and the Anthropic SDK `/v1/messages`,
 * Codex and the OpenAI SDK `/responses`), so a path ending in one was meant for that format
 * whatever base it was sent under.
 */
const TAILS: readonly { family: Family; tail: RegExp }[] = [
  { family: 'messages', tail: /(\/v1)?\/messages(\/count_tokens)?\/?$/i },
  { family: 'responses', tail: /\/responses(\/input_tokens|\/compact)?\/?$/i },
];

/** Where each format is served, and how its clients are told so. */
const BASES: Record<Family, { base: string; api: string; set: string }> = {
  messages: { base: '/first', api: 'Messages API', set: 'ANTHROPIC_BASE_URL (Claude Code) or baseURL (Anthropic SDK)' },
  responses: { base: '/second/v1', api: 'Responses API', set: 'base_url (Codex config.toml) or baseURL (OpenAI SDK)' },
};

/**
 * The format a path's errors are rendered in: the one whose endpoint the path ends in, else `/first`
 * speaks Messages and all else Responses. Read leniently (repeated slashes, any case), so a path
 * that is refused is refused in the format its client speaks (Codex pointed at `/first/v1` gets
 * a Responses error).
 */
export function familyOfPath(rawPath: string): Family {
  const path = rawPath.replace(/\/{2,}/g, '/');
  const tail = TAILS.find((candidate) => candidate.tail.test(path));
  if (tail) return tail.family;
  return FAMILY_PREFIX.test(rawPath) ? 'messages' : 'responses';
}

/**
 * Repeated slashes are one (`//first/v1/messages` is served; base addresses with a trailing slash
 * produce them). Dot segments, raw or percent-encoded, are refused: the two runtimes do not
 * agree on resolving them (Lambda passes the path as sent).
 */
function normalizePath(rawPath: string): string | undefined {
  const path = rawPath.replace(/\/{2,}/g, '/');
  return /(^|\/)(\.|%2e){1,2}(\/|$)/i.test(path) ? undefined : path;
}

/**
 * Maps method and path to a route, or throws a 404/405.
 *
 * Clients append `/v1/...` to whatever base address they are given, so both `<host>/first` and
 * `<host>/first/v1` must work as a base: up to two leading `/v1` segments are accepted, which
 * also makes `/second/responses` an alias of `/second/v1/responses`.
 */
export function resolveRoute(method: string, rawPath: string, options: { identity?: boolean; admin?: boolean } = {}): Route {
  const path = normalizePath(rawPath);
  if (options.identity && path !== undefined) {
    const identity = identityRoute(method, rawPath, path);
    if (identity) return identity;
  }
  if (options.admin && path !== undefined && ADMIN_PATH.test(path)) return { name: 'admin', family: 'responses', maxBodyBytes: FORM_BODY_BYTES };
  const match = path === undefined ? null : PREFIX.exec(path);
  if (!match) throw notServed(method, rawPath, path, ' The endpoints are POST /first/v1/messages and POST /second/v1/responses.');
  const prefix = match[1] as 'first' | 'second';
  let rest = (match[2] ?? '').replace(/\/+$/, '');
  for (let i = 0; i < 2 && (rest === '/v1' || rest.startsWith('/v1/')); i++) rest = rest.slice(3);
  const methods = TABLE[prefix][rest];
  if (!methods) throw notServed(method, rawPath, path, '');
  return { name: allowed(methods, method, rawPath), family: prefix === 'first' ? 'messages' : 'responses' };
}

/** The entry for the method, or a 405 naming the methods the path takes. */
function allowed<T>(methods: Readonly<Record<string, T>>, method: string, rawPath: string): T {
  const entry = methods[method];
  if (entry !== undefined) return entry;
  const allow = Object.keys(methods).join(', ');
  throw new GatewayError('method_not_allowed', `Method ${printable(method, 16)} is not allowed on ${printable(rawPath, 200)}; allowed: ${allow}.`, { headers: { allow } });
}

function identityRoute(method: string, rawPath: string, path: string): Route | undefined {
  const methods = IDENTITY_PATHS[path.replace(/(.)\/+$/, '$1')];
  if (!methods) return undefined;
  const { endpoint, bearer, maxBodyBytes = bearer ? undefined : FORM_BODY_BYTES } = allowed(methods, method, rawPath);
  return { name: 'identity', family: familyOfPath(path), identity: { endpoint, bearer }, ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }) };
}

/**
 * An unserved path. One that ends in an endpoint of ours was sent under the wrong base address (a
 * base without `/first`, Claude Code given the Responses base...): it is told which base to use,
 * with a status every client displays (see `wrong_base_url` in errors.ts). Anything else is a 404.
 */
function notServed(method: string, rawPath: string, path: string | undefined, hint: string): GatewayError {
  const tail = path === undefined ? undefined : TAILS.find((candidate) => candidate.tail.test(path));
  if (tail && path !== undefined) {
    const { base, api, set } = BASES[tail.family];
    return new GatewayError('wrong_base_url', `Wrong base URL: ${printable(path, 200)} is not served here; the ${api} is under ${base}. Set ${set} to the gateway address followed by ${base}.`);
  }
  if (path !== undefined && /\/models\/?$/i.test(path)) {
    return new GatewayError('wrong_base_url', `Wrong base URL: ${printable(path, 200)} is not served here; the model lists are GET /first/v1/models (Messages) and GET /second/v1/models (Responses).`);
  }
  return new GatewayError('not_found', `No route for ${printable(method, 16)} ${printable(rawPath, 200)}.${hint}`);
}
