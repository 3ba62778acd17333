import { globToRegExp, isGlob } from './glob.ts';
import type { PremiumTier } from './prices.ts';
import { signingService, type RoutingConfig, type UpstreamConfig, type UpstreamType } from './routing-schema.ts';

export { parseRoutingConfig, RoutingConfigSchema, UPSTREAM_TYPES, type RoutingConfig, type UpstreamConfig, type UpstreamType } from './routing-schema.ts';

const DEFAULT_BASE_URL: Record<Exclude<UpstreamType, 'bedrock'>, string> = {
  anthropic: 'https://api.anthropic.com',
  openai: 'https://api.openai.com/v1',
  'openai-chat': 'https://api.openai.com/v1',
  simulator: 'http://simulator.invalid',
};

export interface Upstream {
  name: string;
  type: UpstreamType;
  baseUrl: string;
  /** Where its API keys are (environment variables locally, secret members on Lambda); empty when none. */
  apiKeyEnvs: readonly string[];
  /** Requests are signed with AWS SigV4 for this service and region instead of carrying a key. */
  aws: { service: string; region: string } | undefined;
  delayMs: number;
  /** Simulator only: the one format it answers in, when not every client's own. */
  speaks: 'messages' | 'responses' | undefined;
  /** Output-token ceiling for translated requests, when configured. */
  maxOutputTokens: number | undefined;
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
}

/** One place a request can be served: an upstream and the model name it is asked for. */
export interface Target {
  upstream: Upstream;
  upstreamModel: string;
  /** The name the routing config gives this target: its upstreamModel, else the route's model (a glob when the route passes client names on). */
  routedModel: string;
  /** Relative share among a route's primary targets. */
  weight: number;
}

export interface RouteMatch {
  /** The primary targets (one, or several with weights). */
  targets: readonly Target[];
  /** Tried in order after the targets, when they fail before any byte reached the client. */
  fallbacks: readonly Target[];
  /** Premium processing tiers the route lets clients ask for (billed at their multiplier). */
  serviceTiers: readonly PremiumTier[];
  /** Client model names without a known price are metered at the fallback price instead of refused. */
  allowUnpriced: boolean;
}

/** A parsed config with routes compiled once, at start-up. */
export interface Router {
  select(model: string): RouteMatch | undefined;
  /** Concrete model ids named by routes (globs cannot be listed). */
  readonly modelIds: readonly string[];
  /** Every route's model name or glob, in the order routes are tried. */
  readonly patterns: readonly string[];
  readonly upstreams: ReadonlyMap<string, Upstream>;
}

export function createRouter(config: RoutingConfig): Router {
  const upstreams = new Map<string, Upstream>();
  for (const [name, upstream] of Object.entries(config.upstreams)) upstreams.set(name, compileUpstream(name, upstream));
  const routes = config.routes.map((route) => {
    const target = (upstream: string, upstreamModel: string | undefined, weight = 1) => ({ upstream: upstreams.get(upstream) as Upstream, upstreamModel, weight });
    return {
      model: route.model,
      pattern: globToRegExp(route.model),
      targets: route.targets?.map((each) => target(each.upstream, each.upstreamModel, each.weight)) ?? [target(route.upstream as string, route.upstreamModel)],
      fallbacks: (route.fallbacks ?? []).map((each) => target(each.upstream, each.upstreamModel)),
      serviceTiers: route.serviceTiers ?? [],
      allowUnpriced: route.allowUnpriced === true,
    };
  });
  const modelIds = [...new Set(config.routes.filter((route) => !isGlob(route.model)).map((route) => route.model))];
  return {
    upstreams,
    modelIds,
    patterns: [...new Set(config.routes.map((route) => route.model))],
    select(model) {
      const route = routes.find((candidate) => candidate.pattern.test(model));
      if (!route) return undefined;
      // A target without a rename is asked for the client's model name.
      const resolve = (each: { upstream: Upstream; upstreamModel: string | undefined; weight: number }): Target => ({ upstream: each.upstream, upstreamModel: each.upstreamModel ?? model, routedModel: each.upstreamModel ?? route.model, weight: each.weight });
      return { targets: route.targets.map(resolve), fallbacks: route.fallbacks.map(resolve), serviceTiers: route.serviceTiers, allowUnpriced: route.allowUnpriced };
    },
  };
}

function compileUpstream(name: string, upstream: UpstreamConfig): Upstream {
  // A bedrock upstream names its Region in `region`, or in an explicit `aws` signing block (the same one when both are given).
  const region = upstream.aws?.region ?? upstream.region;
  const service = signingService(upstream);
  const aws = service === undefined ? undefined : { service, region: region as string };
  const baseUrl = (upstream.baseUrl ?? (upstream.type === 'bedrock' ? `https://bedrock-runtime.${region}.amazonaws.com` : DEFAULT_BASE_URL[upstream.type])).replace(/\/+$/, '');
  return {
    name,
    type: upstream.type,
    baseUrl,
    apiKeyEnvs: upstream.apiKeyEnv === undefined ? [] : typeof upstream.apiKeyEnv === 'string' ? [upstream.apiKeyEnv] : upstream.apiKeyEnv,
    aws,
    delayMs: upstream.delayMs ?? 0,
    speaks: upstream.speaks,
    maxOutputTokens: upstream.maxOutputTokens,
    // OpenAI itself wants the new field; compatible servers generally know only the old one.
    maxTokensField: upstream.maxTokensField ?? (new URL(baseUrl).hostname === 'api.openai.com' ? 'max_completion_tokens' : 'max_tokens'),
  };
}
