import type { HandlerResponse } from '../deps.ts';
import { GatewayError, printable } from '../errors.ts';
import type { RequestState } from '../request-state.ts';
import type { Router } from '../config/routing.ts';
import { globToRegExp, matchesAny } from '../config/glob.ts';
import { codexCatalog } from '../formats/responses/codex-models.ts';

/** A fixed date: model ids come from config, which has no creation time to report. */
const LISTED_AT = '2025-01-01T00:00:00Z';

/** Model ids named by routes, limited to what the caller may use: the key's allowlist and the person's policy, both. */
export function visibleModels(router: Router, state: Pick<RequestState, 'key' | 'policy'>): string[] {
  const allowlists = [state.key?.models, state.policy?.models].filter((list): list is string[] => list !== undefined).map((list) => list.map(globToRegExp));
  return router.modelIds.filter((id) => allowlists.every((globs) => matchesAny(globs, id)));
}

/** How many routed names a refusal lists before "and N more". */
const LISTED_IN_REFUSAL = 40;

/**
 * The 404 for a model no route matches, listing what is routed (in the order routes are tried), so
 * a typo shows next to the right name. A key with an allowlist, or a person with a model policy,
 * sees only the names they may use, as in the model lists; a key also its allowlist.
 */
export function noRoute(router: Router, state: RequestState, model: string): GatewayError {
  const allow = state.key?.models;
  const names = allow === undefined && state.policy?.models === undefined ? router.patterns : visibleModels(router, state);
  const shown = names.slice(0, LISTED_IN_REFUSAL).join(', ') + (names.length > LISTED_IN_REFUSAL ? ` and ${names.length - LISTED_IN_REFUSAL} more` : '');
  const listed = names.length === 0 ? '' : ` Routed models: ${shown}.`;
  const allowed = allow === undefined ? '' : ` This key may use: ${allow.join(', ')}.`;
  return new GatewayError('not_found', `No route for model "${printable(model, 256)}".${listed}${allowed}`, { code: 'model_not_found', param: 'model' });
}

/**
 * Anthropic's model list shape. Claude Code's gateway model discovery keeps only ids containing
 * `claude` or `anthropic`; name routes accordingly (see docs/routing.md, "The routing config").
 */
export function listMessagesModels(router: Router, state: RequestState): HandlerResponse {
  const data = visibleModels(router, state).map((id) => ({ type: 'model', id, display_name: id, created_at: LISTED_AT }));
  const body = { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/**
 * OpenAI's model list shape (`{object: "list", data}`, the SDKs' `models.list()`), or, when the
 * request names a `client_version` (Codex asks so), Codex's catalog shape `{models: [ModelInfo]}`.
 */
export function listResponsesModels(router: Router, state: RequestState, query: URLSearchParams): HandlerResponse {
  const upstreamOf = (id: string) => router.select(id)?.targets[0]?.upstream.name ?? 'gateway';
  const visible = visibleModels(router, state);
  if (query.has('client_version')) {
    return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(codexCatalog(visible.map((id) => ({ id, upstream: upstreamOf(id) })))) };
  }
  const created = Math.floor(Date.parse(LISTED_AT) / 1000);
  const data = visible.map((id) => ({ id, object: 'model', created, owned_by: upstreamOf(id) }));
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ object: 'list', data }) };
}
