import { isGlob } from '../config/glob.ts';
import type { PremiumTier } from '../config/prices.ts';
import type { RouteMatch } from '../config/routing.ts';
import { GatewayError, printable } from '../errors.ts';
import type { RequestState } from '../request-state.ts';
import type { PriceBook } from './prices.ts';

/** Request members that ask for a premium processing tier, and the tier each value is billed as. */
const TIER_REQUESTS: Readonly<Record<RequestState['family'], { field: string; tiers: Readonly<Record<string, PremiumTier>> }>> = {
  // Anthropic fast mode: https://platform.claude.com/docs/en/build-with-claude/fast-mode
  messages: { field: 'speed', tiers: { fast: 'fast' } },
  // OpenAI: `fast` and `priority` are one tier (Fast mode, formerly Priority processing); `ultrafast` another.
  responses: { field: 'service_tier', tiers: { priority: 'priority', fast: 'priority', ultrafast: 'ultrafast' } },
};

/**
 * Refuses a model request whose cost the gateway could not meter, before anything goes
 * upstream, with a 400 in the client's format that says what to do:
 * - `background: true` (Responses): the answer would be fetched later by id, past the gateway
 *   and its meter (the 200 that queues it carries no usage);
 * - a premium processing tier the route does not allow (`serviceTiers`): billed at a multiple
 *   of the standard rates, it is the operator's choice per route;
 * - on a glob route that passes client model names on, a name with no known price (neither the
 *   routing config's `prices` nor the built-in table), unless the route allows unpriced models
 *   (`allowUnpriced`) or the config sets a `"*"` price: the built-in fallback would charge a
 *   model whatever its real price. The simulator costs nothing and is never refused.
 */
export function refuseUnbillable(state: RequestState, match: RouteMatch, prices: PriceBook): void {
  const body = state.body ?? {};
  const model = printable(state.model ?? '', 120);
  if (state.family === 'responses' && body.background === true) {
    throw new GatewayError('invalid_request', 'Background responses (background: true) are not supported by this gateway: send the request without background, streamed if it runs long.', { param: 'background' });
  }
  const { field, tiers } = TIER_REQUESTS[state.family];
  const asked = body[field];
  const tier = typeof asked === 'string' ? tiers[asked] : undefined;
  if (tier !== undefined && !match.serviceTiers.includes(tier)) {
    throw new GatewayError('invalid_request', `This gateway does not allow ${field} "${printable(asked as string, 20)}" for model "${model}": it is billed above standard rates. Send the request without ${field}, or ask the gateway's operator to allow it on this model's route.`, { param: field });
  }
  if (match.allowUnpriced) return;
  for (const target of [...match.targets, ...match.fallbacks]) {
    if (target.upstream.type === 'simulator' || !isGlob(target.routedModel)) continue;
    const price = prices.lookup(target.upstreamModel, state.model);
    if (price.source === 'fallback' && !price.configuredFallback) {
      throw new GatewayError('invalid_request', `Model "${model}" has no known price on this gateway, so its use cannot be metered: ask for a model the gateway prices, or ask the gateway's operator to add a price for it.`, { param: 'model', code: 'model_not_priced' });
    }
  }
}
