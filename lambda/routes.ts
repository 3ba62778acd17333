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
  | 'responses_websocket';

export interface Route {
  name: RouteName;
  family: Family;
}

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

const PREFIX = /^\/(first|second)(\/.*)?$/;
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
export function resolveRoute(method: string, rawPath: string): Route {
  const path = normalizePath(rawPath);
  const match = path === undefined ? null : PREFIX.exec(path);
  if (!match) throw notServed(method, rawPath, path, ' The endpoints are POST /first/v1/messages and POST /second/v1/responses.');
  const prefix = match[1] as 'first' | 'second';
  let rest = (match[2] ?? '').replace(/\/+$/, '');
  for (let i = 0; i < 2 && (rest === '/v1' || rest.startsWith('/v1/')); i++) rest = rest.slice(3);
  const methods = TABLE[prefix][rest];
  if (!methods) throw notServed(method, rawPath, path, '');
  const name = methods[method];
  if (!name) {
    const allow = Object.keys(methods).join(', ');
    throw new GatewayError('method_not_allowed', `Method ${printable(method, 16)} is not allowed on ${printable(rawPath, 200)}; allowed: ${allow}.`, { headers: { allow } });
  }
  return { name, family: prefix === 'first' ? 'messages' : 'responses' };
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
