import { GatewayError } from './errors.ts';

/** The two wire formats clients speak; they pick error envelopes and stream framing. */
export type Family = 'messages' | 'responses';

export type RouteName =
  | 'messages'
  | 'count_tokens'
  | 'messages_models'
  | 'probe'
  | 'responses'
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
  },
  second: {
    '': { HEAD: 'probe', GET: 'probe' },
    '/responses': { POST: 'responses', GET: 'responses_websocket' },
    '/models': { GET: 'responses_models' },
  },
};

const PREFIX = /^\/(first|second)(\/.*)?$/;

/** The format a path's errors are rendered in: `/first` speaks Messages, all else Responses. */
export function familyOfPath(rawPath: string): Family {
  return PREFIX.exec(rawPath)?.[1] === 'first' ? 'messages' : 'responses';
}

/**
 * Maps method and path to a route, or throws a 404/405.
 *
 * Clients append `/v1/...` to whatever base address they are given, so both `<host>/first` and
 * `<host>/first/v1` must work as a base: up to two leading `/v1` segments are accepted, which
 * also makes `/second/responses` an alias of `/second/v1/responses`.
 */
export function resolveRoute(method: string, rawPath: string): Route {
  const match = PREFIX.exec(rawPath);
  if (!match) {
    throw new GatewayError('not_found', `No route for ${method} ${rawPath}. The endpoints are POST /first/v1/messages and POST /second/v1/responses.`);
  }
  const prefix = match[1] as 'first' | 'second';
  let rest = (match[2] ?? '').replace(/\/+$/, '');
  for (let i = 0; i < 2 && (rest === '/v1' || rest.startsWith('/v1/')); i++) rest = rest.slice(3);
  const methods = TABLE[prefix][rest];
  if (!methods) throw new GatewayError('not_found', `No route for ${method} ${rawPath}.`);
  const name = methods[method];
  if (!name) {
    const allow = Object.keys(methods).join(', ');
    throw new GatewayError('method_not_allowed', `Method ${method} is not allowed on ${rawPath}; allowed: ${allow}.`, { headers: { allow } });
  }
  return { name, family: prefix === 'first' ? 'messages' : 'responses' };
}
