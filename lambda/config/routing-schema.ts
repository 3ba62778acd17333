import * as z from 'zod/mini';
import { PricesConfigSchema } from './prices.ts';

/**
 * The routing config's schema: named upstreams, and model globs routed to targets on them (first
 * match wins), with optional weighted primaries and fallbacks. The same schema is used by
 * `npm start` (file or default), by the Lambda (JSON in the environment) and by `cdk synth`
 * (validated before anything deploys). Every mistake is reported, each naming its field.
 */
export const UPSTREAM_TYPES = ['anthropic', 'openai', 'openai-chat', 'bedrock', 'simulator'] as const;
export type UpstreamType = (typeof UPSTREAM_TYPES)[number];

const EnvName = z.string().check(z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'));
const AwsRegion = z.string().check(z.regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'must be an AWS region such as us-east-1'));
const UpstreamName = z.string().check(z.minLength(1));

const UpstreamSchema = z.strictObject({
  type: z.enum(UPSTREAM_TYPES),
  baseUrl: z.optional(z.url({ protocol: /^https?$/ })),
  /** One environment variable (or secret member) holding the key, or several keys to spread requests over. */
  apiKeyEnv: z.optional(z.union([EnvName, z.array(EnvName).check(z.minLength(1))])),
  /** Sign requests with AWS SigV4 (the standard credential chain) instead of an API key. */
  aws: z.optional(z.strictObject({ service: z.string().check(z.regex(/^[a-z0-9-]+$/, 'must be an AWS service signing name such as bedrock')), region: AwsRegion })),
  /** `bedrock` only: the AWS region of Bedrock Runtime (requests are signed for service `bedrock`). */
  region: z.optional(AwsRegion),
  /** Upstreams signed for Bedrock only, for the stack: let the function invoke any model in the region (routes pass client model names through). */
  anyModel: z.optional(z.boolean()),
  /** Simulator only: pause between streamed events, to make streaming visible by eye. */
  delayMs: z.optional(z.int().check(z.minimum(0), z.maximum(10_000))),
  /** Translated requests: the output-token ceiling the upstream accepts (requests above it are clamped). */
  maxOutputTokens: z.optional(z.int().check(z.minimum(1))),
  /** `openai-chat` only: the field the server reads the output limit from. */
  maxTokensField: z.optional(z.enum(['max_tokens', 'max_completion_tokens'])),
});

const TargetSchema = z.strictObject({
  upstream: UpstreamName,
  upstreamModel: z.optional(z.string().check(z.minLength(1))),
  /** Share of the requests among a route's primary targets (relative; default 1). */
  weight: z.optional(z.number()),
});

const FallbackSchema = z.strictObject({
  upstream: UpstreamName,
  upstreamModel: z.optional(z.string().check(z.minLength(1))),
});

const RouteSchema = z.strictObject({
  model: z.string().check(z.minLength(1)),
  /** The one primary target (or `targets` for several). */
  upstream: z.optional(UpstreamName),
  upstreamModel: z.optional(z.string().check(z.minLength(1))),
  /** Several primary targets, chosen by weight and kept per conversation. */
  targets: z.optional(z.array(TargetSchema).check(z.minLength(1, 'needs at least one target'))),
  /** Tried in order when the targets before fail before any byte reached the client. */
  fallbacks: z.optional(z.array(FallbackSchema)),
});

export const RoutingConfigSchema = z
  .strictObject({
    upstreams: z.record(z.string().check(z.regex(/^[A-Za-z0-9_-]+$/, 'upstream names use letters, digits, _ and -')), UpstreamSchema),
    routes: z.array(RouteSchema).check(z.minLength(1, 'at least one route is needed')),
    /** Prices per model glob, adding to and overriding the built-in table (lambda/config/prices.ts). */
    prices: z.optional(PricesConfigSchema),
  })
  .check(z.superRefine((config, context) => validateReferences(config, (path, message) => context.addIssue({ code: 'custom', path, message, input: config }))));

export type RoutingConfig = z.infer<typeof RoutingConfigSchema>;
export type UpstreamConfig = z.infer<typeof UpstreamSchema>;
export type RouteConfig = z.infer<typeof RouteSchema>;

type Report = (path: (string | number)[], message: string) => void;

/** The rules one field cannot check alone: references, weights, repeated targets, auth per type. */
function validateReferences(config: RoutingConfig, report: Report): void {
  const names = Object.keys(config.upstreams);
  for (const [name, upstream] of Object.entries(config.upstreams)) {
    if (upstream.aws !== undefined && upstream.apiKeyEnv !== undefined) report(['upstreams', name], 'give "aws" (SigV4) or "apiKeyEnv" (API keys), not both');
    if (upstream.type === 'bedrock' && upstream.region === undefined && upstream.aws === undefined) report(['upstreams', name, 'region'], 'a bedrock upstream needs its AWS region');
    if (upstream.type !== 'bedrock' && upstream.region !== undefined) report(['upstreams', name, 'region'], 'only bedrock upstreams take "region" (others sign with "aws")');
    if (upstream.type !== 'bedrock' && upstream.aws?.service !== 'bedrock' && upstream.anyModel !== undefined) report(['upstreams', name, 'anyModel'], 'only upstreams signed for Bedrock take "anyModel"');
    if (upstream.type === 'simulator' && (upstream.aws !== undefined || upstream.apiKeyEnv !== undefined)) report(['upstreams', name], 'the simulator takes no credentials');
  }
  config.routes.forEach((route, index) => {
    const at = (...path: (string | number)[]) => ['routes', index, ...path];
    const known = (path: (string | number)[], upstream: string) => {
      if (!(upstream in config.upstreams)) report(path, `unknown upstream "${upstream}" (defined: ${names.join(', ') || 'none'})`);
    };
    if ((route.upstream === undefined) === (route.targets === undefined)) report(at(), 'give either "upstream" or "targets"');
    if (route.targets !== undefined && route.upstreamModel !== undefined) report(at('upstreamModel'), 'with "targets", give upstreamModel on each target');
    const seen = new Set<string>();
    const visit = (path: (string | number)[], upstream: string, upstreamModel: string | undefined, role: 'target' | 'fallback') => {
      known([...path, 'upstream'], upstream);
      const id = `${upstream}\u0000${upstreamModel ?? route.model}`;
      if (seen.has(id)) report(path, `${role} ${upstream}/${upstreamModel ?? route.model} repeats an earlier target of this route (a fallback cycle)`);
      seen.add(id);
    };
    if (route.upstream !== undefined) visit(at(), route.upstream, route.upstreamModel, 'target');
    route.targets?.forEach((target, i) => {
      visit(at('targets', i), target.upstream, target.upstreamModel, 'target');
      if (target.weight !== undefined && !(Number.isFinite(target.weight) && target.weight > 0)) report(at('targets', i, 'weight'), 'weight must be a number above 0');
    });
    route.fallbacks?.forEach((fallback, i) => visit(at('fallbacks', i), fallback.upstream, fallback.upstreamModel, 'fallback'));
  });
}

/** Validates a config; throws with one line per problem, each naming the field at fault. */
export function parseRoutingConfig(input: unknown): RoutingConfig {
  const result = RoutingConfigSchema.safeParse(input);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => `  - ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  throw new Error(`Invalid routing config:\n${lines.join('\n')}`);
}
