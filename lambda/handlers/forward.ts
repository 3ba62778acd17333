import type { Target } from '../config/routing.ts';
import type { GatewayDeps, HandlerResponse } from '../deps.ts';
import { GatewayError } from '../errors.ts';
import { forgetTry, type Attempt, type RequestState } from '../request-state.ts';
import { servesOperation, speaksFamily, type Operation } from '../upstream/providers.ts';
import { attemptOrder, stickinessKey } from '../upstream/target-order.ts';
import type { AttemptOutcome } from './attempt.ts';
import type { CleanedRequest } from '../formats/cleaned-request.ts';
import { withoutForeignThinking } from '../formats/messages/foreign-thinking.ts';
import { refusesReasoningItems, withoutReasoningItems } from '../formats/responses/reasoning-items.ts';
import { countTokensLocally } from './count-tokens.ts';
import { noRoute } from './models.ts';
import { passthroughAttempt } from './passthrough.ts';
import { translatedAttempt } from './translated.ts';
import { refuseUnbillable } from '../usage/billable.ts';
import { retryableStatus } from './upstream-exchange.ts';
import { accountOf } from '../usage/metering.ts';

/**
 * Sends a validated request to the targets its model routes to and relays the first answer.
 *
 * Targets are tried in the order of upstream/target-order.ts (the conversation's primary, the
 * other primaries, then the fallbacks; targets cooling down last). A target that fails before
 * any byte reached the client in a way another may not (see attempt.ts) hands over to the next,
 * while the request's deadline allows; an upstream that refused a key (429, 401, 403) is tried
 * again at once with another of its keys if it has one. The client gets the first answer, or the
 * last failure. `x-gateway-upstream` names who answered; the log lists every try.
 */
export async function forward(state: RequestState, deps: GatewayDeps, operation: Operation, clientHeaders: Record<string, string | undefined>): Promise<HandlerResponse> {
  const model = state.model as string;
  const match = deps.router.select(model);
  if (!match) throw noRoute(deps.router, state, model);
  if (operation === 'create' || operation === 'compact') refuseUnbillable(state, match, deps.prices);
  state.stickyKey = stickinessKey(clientHeaders, state.body, accountOf(state));
  const queue = attemptOrder(match, state.stickyKey, (target) => deps.health.coolingDown(target));
  const bodies = requestBodies(state);
  let keyRetries = 0;
  let last: Extract<AttemptOutcome, { retry: string }> | undefined;
  let lastTarget: Target | undefined;
  for (let index = 0; index < queue.length; index++) {
    const target = queue[index] as Target;
    if (index > 0 && (Date.now() >= state.deadline || state.abandon?.aborted)) break;
    // Another key of the same upstream can take over from a refused one, even on the last target.
    const keyCount = target.upstream.type === 'simulator' ? 0 : (await deps.credentials.keys(target.upstream)).length;
    const otherKey = keyCount > 1 && deps.health.availableKeys(target.upstream, keyCount) > 1 && keyRetries < MAX_KEY_RETRIES;
    const attempt: Attempt = { upstream: target.upstream.name, ...(target.upstreamModel === model ? {} : { model: target.upstreamModel }), ms: 0 };
    state.attempts.push(attempt);
    forgetTry(state);
    const started = Date.now();
    const outcome = await tryTarget(state, deps, target, operation, clientHeaders, index < queue.length - 1 || otherKey, bodies).finally(() => (attempt.ms = Date.now() - started));
    if ('served' in outcome && !bodies.withoutReasoning && state.family === 'responses' && target.upstream.type === 'openai' && refusesReasoningItems(outcome.served)) {
      bodies.withoutReasoning = withoutReasoningItems(state.body ?? {});
      if (bodies.withoutReasoning) {
        attempt.status = outcome.served.statusCode;
        // The refusal is the answer if the request's time runs out before the try without the reasoning.
        last = handedOver(outcome.served);
        lastTarget = target;
        queue.splice(index + 1, 0, target);
        continue;
      }
    }
    // A key refused for good (401/403; a 429 comes back as `retry`) is replaced by another of the
    // upstream's keys: the refusal is about the gateway's credential, which the client cannot fix.
    const anotherKeyNext = attempt.keyRestedMs !== undefined && otherKey;
    if ('served' in outcome && !anotherKeyNext) {
      attempt.status = outcome.served.statusCode;
      if (retryableStatus(outcome.served.statusCode)) deps.health.targetFailed(target);
      else deps.health.targetSucceeded(target);
      return tagged(outcome.served, target);
    }
    last = 'served' in outcome ? handedOver(outcome.served) : outcome;
    lastTarget = target;
    if (last.status === undefined) attempt.error = last.retry;
    else attempt.status = last.status;
    if (anotherKeyNext) {
      keyRetries++;
      queue.splice(index + 1, 0, target);
      continue;
    }
    deps.health.targetFailed(target);
  }
  // The last try handed back a failure (its successor never ran): give it as the client would have got it.
  if (last?.answer && lastTarget) {
    state.status = last.answer.statusCode;
    return tagged(last.answer, lastTarget);
  }
  throw last?.error ?? new GatewayError('upstream_unreachable', `Every upstream for this model failed; the last: ${last?.retry ?? 'none tried'}.`);
}

/** Refused keys replaced by another key of the same upstream, at most, per request. */
const MAX_KEY_RETRIES = 3;

/** An answer another try replaces, kept as the request's answer should no other try run. */
function handedOver(answer: HandlerResponse): Extract<AttemptOutcome, { retry: string }> {
  return { retry: `status ${answer.statusCode}`, status: answer.statusCode, answer };
}

function tagged(response: HandlerResponse, target: Target): HandlerResponse {
  response.headers['x-gateway-upstream'] = target.upstream.name;
  return response;
}

function tryTarget(state: RequestState, deps: GatewayDeps, target: Target, operation: Operation, clientHeaders: Record<string, string | undefined>, canRetry: boolean, bodies: RequestBodies): Promise<AttemptOutcome> {
  const { upstream } = target;
  state.upstream = upstream.name;
  state.upstreamModel = target.upstreamModel;
  state.routedModel = target.routedModel;
  if (!servesOperation(upstream.type, operation, target.upstreamModel)) {
    if (operation !== 'compact') return Promise.resolve({ served: countTokensLocally(state) });
    throw new GatewayError('not_implemented', `Remote compaction (/responses/compact) is served by OpenAI upstreams only; "${state.model}" routes to a ${upstream.type} upstream. Codex compacts locally with a custom provider.`);
  }
  if (operation === 'create' && !speaksFamily(upstream, state.family)) return translatedAttempt(state, deps, target, clientHeaders, canRetry);
  if (operation === 'create' && bodies.withoutReasoning) return passthroughAttempt(state, deps, target, operation, clientHeaders, canRetry, bodies.withoutReasoning);
  const foreign = operation === 'create' && upstream.type !== 'simulator' ? bodies.withoutForeignReasoning() : undefined;
  if (foreign === 'translate') return translatedAttempt(state, deps, target, clientHeaders, canRetry);
  return passthroughAttempt(state, deps, target, operation, clientHeaders, canRetry, foreign);
}

/** The request's body as targets of its own format take it, each made at most once however many targets are tried. */
interface RequestBodies {
  /** Set once an upstream refused reasoning another organization encrypted: sent without it from then on. */
  withoutReasoning?: CleanedRequest;
  /**
   * A conversation that switched routes carries reasoning another provider issued, packed by the
   * translator (`gw1.`). Forwarded as is, the provider would reject it (400): a Messages request
   * goes without those blocks (the rest byte for byte, foreign-thinking.ts), a Responses request
   * (or a Messages one that cannot lose them) through the same-format translation, which keeps
   * only the provider's own reasoning. Undefined when there is none.
   */
  withoutForeignReasoning(): CleanedRequest | 'translate' | undefined;
}

function requestBodies(state: RequestState): RequestBodies {
  let foreign: { made: CleanedRequest | 'translate' | undefined } | undefined;
  const make = (): CleanedRequest | 'translate' | undefined => {
    const raw = state.rawBody as string;
    if (!raw.includes('"gw1.')) return undefined;
    return (state.family === 'messages' ? withoutForeignThinking(raw, state.body ?? {}) : undefined) ?? 'translate';
  };
  return { withoutForeignReasoning: () => (foreign ??= { made: make() }).made };
}
