import type { Usage } from '../observability/usage.ts';
import type { RequestState } from '../request-state.ts';

/**
 * One metered request, as the UsageRecorder charges it to its accounts (the key, the person) and
 * counts it in the rollups (lambda/usage/rollup-fold.ts).
 */
export interface UsageEvent {
  /** The request's id: on Lambda, the event item's sort key (a retried write lands on the same item). */
  requestId: string;
  /** When the response ended: picks the UTC day of the accounts' items and the rollups' buckets. */
  at: Date;
  /** The issued key's public id, when the request came with a key. */
  keyId?: string;
  /** The person charged (the IdP's `sub`): a signed-in session's, or the owner of the key. */
  personSub?: string;
  /** The person's groups (rollups per group; group pools read them). */
  groups: readonly string[];
  /** The client's model name: the accounts' day items are per this name, as `keys usage` shows them. */
  model: string;
  /** The model as the rollups name it: never a name a client made up (see modelDimension). */
  modelDimension: string;
  upstream: string;
  status?: number;
  /** How the response ended when it was not plainly (`client_closed`, `upstream_failed`...); absent or `ok` = ok. */
  outcome?: string;
  /** Time to the first byte of the upstream's answer, from the request's start. */
  ttfbMs?: number;
  usage?: Usage;
  costMicroUsd: number;
  /** Answered after another try failed: a fallback target, or another key of the upstream. */
  fallback?: boolean;
}

/**
 * At most this many of a person's groups are counted (Entra ID puts at most 200 in a token; a
 * bound keeps one request's rollup writes and event item bounded whatever the IdP sends).
 */
export const MAX_GROUPS = 200;

/** The usage event of a metered request whose response has ended. */
export function usageEventOf(state: RequestState, at: Date, configuredModels: ReadonlySet<string>): UsageEvent {
  const person = state.principal?.person;
  const event: UsageEvent = {
    requestId: state.id,
    at,
    groups: person ? [...new Set(person.groups)].slice(0, MAX_GROUPS) : [],
    model: state.model as string,
    modelDimension: modelDimension(state, configuredModels),
    upstream: state.upstream as string,
    costMicroUsd: state.costMicroUsd ?? 0,
  };
  if (state.key) event.keyId = state.key.id;
  if (person) event.personSub = person.sub;
  if (state.status !== undefined) event.status = state.status;
  if (state.outcome !== undefined) event.outcome = state.outcome;
  if (state.firstByteAt !== undefined) event.ttfbMs = state.firstByteAt - state.startedAt;
  if (state.usage) event.usage = state.usage;
  if (state.attempts.length > 1) event.fallback = true;
  return event;
}

/**
 * The rollups' model dimension. Its values must stay few, as the EMF Model dimension's
 * (observability/request-log.ts): a key holder must not mint rows by sending made-up names down
 * a glob route. So the client's name when the configuration bounds it (a route names it) or an
 * upstream accepted exactly that name (a success: it serves that model); otherwise what the
 * route names: its pattern (`claude-*`), or its target's model when it renames.
 */
export function modelDimension(state: RequestState, configuredModels: ReadonlySet<string>): string {
  const model = state.model as string;
  if (configuredModels.has(model) || (state.modelAccepted && state.upstreamModel === model)) return model;
  return state.routedModel ?? model;
}
