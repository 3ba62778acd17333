import * as z from 'zod/mini';
import { isObject, type Json } from '../translate/request/shared.ts';
import { IdentityConfigSchema } from './identity-schema.ts';
import { describeIssue } from './issues.ts';
import { PREMIUM_TIERS, PricesConfigSchema } from './prices.ts';

/**
 * The routing config's schema: named upstreams, and model globs routed to targets on them (first
 * match wins), with optional weighted primaries and fallbacks. The same schema is used by
 * `npm start` (file or default), by the Lambda (JSON in the environment) and by `cdk synth`
 * (validated before anything deploys) through parseRoutingConfig: every mistake is reported,
 * each naming its field.
 */
export const UPSTREAM_TYPES = ['anthropic', 'openai', 'openai-chat', 'bedrock', 'simulator'] as const;
export type UpstreamType = (typeof UPSTREAM_TYPES)[number];

const EnvName = z.string().check(z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'));
const AwsRegion = z.string().check(z.regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'must be an AWS region such as us-east-1'));
const UpstreamName = z.string().check(z.minLength(1));

const UpstreamSchema = z.strictObject({
  type: z.enum(UPSTREAM_TYPES),
  baseUrl: z.optional(z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })),
  /** One environment variable (or secret member) holding the key, or several keys to spread requests over. */
  apiKeyEnv: z.optional(z.union([EnvName, z.array(EnvName).check(z.minLength(1))], { error: 'must be an environment variable name, or a list of them' })),
  /** Sign requests with AWS SigV4 (the standard credential chain) instead of an API key. */
  aws: z.optional(z.strictObject({ service: z.string().check(z.regex(/^[a-z0-9-]+$/, 'must be an AWS service signing name such as bedrock')), region: AwsRegion })),
  /** `bedrock` only: the AWS region of Bedrock Runtime (requests are signed for service `bedrock`). */
  region: z.optional(AwsRegion),
  /** Upstreams signed for Bedrock only, for the stack: let the function invoke any model in the region (routes pass client model names through). */
  anyModel: z.optional(z.boolean()),
  /** Simulator only: pause between streamed events, to make streaming visible by eye. */
  delayMs: z.optional(z.int().check(z.minimum(0), z.maximum(10_000))),
  /**
   * Simulator only: answer in this one format, like a provider (`messages`: Anthropic's,
   * `responses`: OpenAI's), so clients of the other format go through the translator. Without
   * it the simulator answers every client in its own format.
   */
  speaks: z.optional(z.enum(['messages', 'responses'])),
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
  /**
   * Premium processing tiers clients may ask for on this route (`priority`: OpenAI's
   * `service_tier` "priority"/"fast"; `fast`: Anthropic's `speed: "fast"`; `ultrafast`), each
   * billed at its multiplier. Others are refused (400). Default: none.
   */
  serviceTiers: z.optional(z.array(z.enum(PREMIUM_TIERS))),
  /**
   * A glob route passes client model names on: a name neither `prices` nor the built-in table
   * prices is refused (400) unless this is true, when it is metered at the fallback price.
   */
  allowUnpriced: z.optional(z.boolean()),
});

/** The config's structure; the rules across fields are checked by parseRoutingConfig. */
export const RoutingConfigSchema = z.strictObject({
  upstreams: z.record(z.string().check(z.regex(/^[A-Za-z0-9_-]+$/, 'upstream names use letters, digits, _ and -')), UpstreamSchema),
  routes: z.array(RouteSchema).check(z.minLength(1, 'at least one route is needed')),
  /** Prices per model glob, adding to and overriding the built-in table (lambda/config/prices.ts). */
  prices: z.optional(PricesConfigSchema),
  /** Sign-in with the company's OpenID provider and policy per person and group (docs/sign-in.md). */
  identity: z.optional(IdentityConfigSchema),
});

export type RoutingConfig = z.infer<typeof RoutingConfigSchema>;
export type UpstreamConfig = z.infer<typeof UpstreamSchema>;
export type RouteConfig = z.infer<typeof RouteSchema>;

type Report = (path: (string | number)[], message: string) => void;

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/**
 * The AWS service an upstream's requests are signed for with SigV4, or undefined when they carry
 * API keys: its `aws` block's, or `bedrock` for a `bedrock` upstream without keys. The router
 * signs with it, and the stack grants IAM permissions from the router's upstreams
 * (lib/constructs/bedrock-access.ts), so both follow this one rule.
 */
export function signingService(upstream: { type?: unknown; apiKeyEnv?: unknown; aws?: unknown }): string | undefined {
  if (upstream.aws !== undefined) return isObject(upstream.aws) && typeof upstream.aws.service === 'string' ? upstream.aws.service : undefined;
  return upstream.type === 'bedrock' && upstream.apiKeyEnv === undefined ? 'bedrock' : undefined;
}

/**
 * The rules one field cannot check alone: references, weights, repeated targets, auth per type.
 * It reads the input as given (whatever the schema thought of it), so that a config with a
 * mistyped field still has every other mistake named in the same run.
 */
function validateReferences(input: unknown, report: Report): void {
  if (!isObject(input)) return;
  const upstreams = isObject(input.upstreams) ? input.upstreams : {};
  const names = Object.keys(upstreams);
  for (const [name, upstream] of Object.entries(upstreams)) {
    if (!isObject(upstream)) continue;
    if (upstream.aws !== undefined && upstream.apiKeyEnv !== undefined) report(['upstreams', name], 'give "aws" (SigV4) or "apiKeyEnv" (API keys), not both');
    if (upstream.type === 'bedrock' && upstream.region === undefined && upstream.aws === undefined) report(['upstreams', name, 'region'], 'a bedrock upstream needs its AWS region');
    if (upstream.type !== 'bedrock' && upstream.region !== undefined) report(['upstreams', name, 'region'], 'only bedrock upstreams take "region" (others sign with "aws")');
    const awsRegion = isObject(upstream.aws) ? upstream.aws.region : undefined;
    if (upstream.region !== undefined && awsRegion !== undefined && awsRegion !== upstream.region) {
      report(['upstreams', name, 'region'], `"region" (${String(upstream.region)}) and "aws.region" (${String(awsRegion)}) differ: requests would go to one Region and be signed for the other; give the Region once`);
    }
    if (upstream.anyModel !== undefined && signingService(upstream) !== 'bedrock') report(['upstreams', name, 'anyModel'], 'only upstreams signed for Bedrock take "anyModel" (it widens their IAM grant; API keys need none)');
    if (upstream.type === 'simulator' && (upstream.aws !== undefined || upstream.apiKeyEnv !== undefined)) report(['upstreams', name], 'the simulator takes no credentials');
    if (upstream.type !== 'simulator' && upstream.speaks !== undefined) report(['upstreams', name, 'speaks'], 'only the simulator takes "speaks" (other upstreams speak their type\'s format)');
  }
  list(input.routes).forEach((route, index) => {
    if (!isObject(route)) return;
    const at = (...path: (string | number)[]) => ['routes', index, ...path];
    if ((route.upstream === undefined) === (route.targets === undefined)) report(at(), 'give either "upstream" or "targets"');
    if (route.targets !== undefined && route.upstreamModel !== undefined) report(at('upstreamModel'), 'with "targets", give upstreamModel on each target');
    const seen = new Set<string>();
    const visit = (path: (string | number)[], target: Json, role: 'target' | 'fallback') => {
      const { upstream, upstreamModel } = target;
      if (typeof upstream !== 'string') return;
      if (!Object.hasOwn(upstreams, upstream)) report([...path, 'upstream'], `unknown upstream "${upstream}" (defined: ${names.join(', ') || 'none'})`);
      const model = typeof upstreamModel === 'string' ? upstreamModel : String(route.model);
      const id = `${upstream}\u0000${model}`;
      if (seen.has(id)) report(path, `${role} ${upstream}/${model} repeats an earlier target of this route (a fallback cycle)`);
      seen.add(id);
    };
    if (route.upstream !== undefined) visit(at(), route, 'target');
    list(route.targets).forEach((target, i) => {
      if (!isObject(target)) return;
      visit(at('targets', i), target, 'target');
      const { weight } = target;
      if (weight !== undefined && !(typeof weight === 'number' && Number.isFinite(weight) && weight > 0)) report(at('targets', i, 'weight'), 'weight must be a number above 0');
    });
    list(route.fallbacks).forEach((fallback, i) => {
      if (isObject(fallback)) visit(at('fallbacks', i), fallback, 'fallback');
    });
  });
}

/** Sign-in policies: one base at most (the entry without `groups`, which every person's policy starts from). */
function validatePolicies(input: unknown, report: Report): void {
  const identity = isObject(input) && isObject(input.identity) ? input.identity : undefined;
  const bases = list(identity?.policies).flatMap((policy, index) => (isObject(policy) && policy.groups === undefined ? [index] : []));
  if (bases.length > 1) report(['identity', 'policies', bases[1] as number], `a second policy without "groups" (the first is policies.${bases[0]}): give one base policy, and "groups" on the others`);
}

/**
 * Validates a config; throws with one line per problem, each naming the field at fault: every
 * problem the schema finds, and every broken rule across fields (one line per field at most).
 */
export function parseRoutingConfig(input: unknown): RoutingConfig {
  const result = RoutingConfigSchema.safeParse(input, { reportInput: true });
  const problems = new Map<string, string>();
  const report: Report = (path, message) => {
    const field = path.join('.') || '(root)';
    if (!problems.has(field)) problems.set(field, message);
  };
  for (const issue of result.error?.issues ?? []) report(issue.path as (string | number)[], describeIssue(issue));
  validateReferences(input, report);
  validatePolicies(input, report);
  if (result.success && problems.size === 0) return result.data;
  const lines = [...problems].map(([field, message]) => `  - ${field}: ${message}`);
  throw new Error(`Invalid routing config:\n${lines.join('\n')}`);
}
