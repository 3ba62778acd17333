import * as z from 'zod/mini';
import { globToRegExp, isGlob } from './glob.ts';

/**
 * The routing config: named upstreams, and model globs routed to them (first match wins).
 * The same schema is used by `npm start` (file or default), by the Lambda (JSON in the
 * environment) and by `cdk synth` (validated before anything deploys).
 */
export const UPSTREAM_TYPES = ['anthropic', 'openai', 'openai-chat', 'simulator'] as const;
export type UpstreamType = (typeof UPSTREAM_TYPES)[number];

const UpstreamSchema = z.strictObject({
  type: z.enum(UPSTREAM_TYPES),
  baseUrl: z.optional(z.url({ protocol: /^https?$/ })),
  apiKeyEnv: z.optional(z.string().check(z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'))),
  /** Simulator only: pause between streamed events, to make streaming visible by eye. */
  delayMs: z.optional(z.int().check(z.minimum(0), z.maximum(10_000))),
  /** Translated requests: the output-token ceiling the upstream accepts (requests above it are clamped). */
  maxOutputTokens: z.optional(z.int().check(z.minimum(1))),
  /** `openai-chat` only: the field the server reads the output limit from. */
  maxTokensField: z.optional(z.enum(['max_tokens', 'max_completion_tokens'])),
});

const RouteSchema = z.strictObject({
  model: z.string().check(z.minLength(1)),
  upstream: z.string().check(z.minLength(1)),
  upstreamModel: z.optional(z.string().check(z.minLength(1))),
});

export const RoutingConfigSchema = z
  .strictObject({
    upstreams: z.record(z.string().check(z.regex(/^[A-Za-z0-9_-]+$/, 'upstream names use letters, digits, _ and -')), UpstreamSchema),
    routes: z.array(RouteSchema).check(z.minLength(1, 'at least one route is needed')),
  })
  .check(
    z.refine((config) => config.routes.every((route) => route.upstream in config.upstreams), {
      message: 'every route must name an upstream defined in "upstreams"',
      path: ['routes'],
    }),
  );

export type RoutingConfig = z.infer<typeof RoutingConfigSchema>;
export type UpstreamConfig = z.infer<typeof UpstreamSchema>;

const DEFAULT_BASE_URL: Record<UpstreamType, string> = {
  anthropic: 'https://api.anthropic.com',
  openai: 'https://api.openai.com/v1',
  'openai-chat': 'https://api.openai.com/v1',
  simulator: 'http://simulator.invalid',
};

export interface Upstream {
  name: string;
  type: UpstreamType;
  baseUrl: string;
  apiKeyEnv: string | undefined;
  delayMs: number;
  /** Output-token ceiling for translated requests, when configured. */
  maxOutputTokens: number | undefined;
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
}

export interface RouteMatch {
  upstream: Upstream;
  /** The model name sent upstream (the route's rename, or the client's name). */
  upstreamModel: string;
}

/** A parsed config with routes compiled once, at start-up. */
export interface Router {
  select(model: string): RouteMatch | undefined;
  /** Concrete model ids named by routes (globs cannot be listed). */
  readonly modelIds: readonly string[];
  readonly upstreams: ReadonlyMap<string, Upstream>;
}

/** Validates a config; throws with one line per problem, each naming the field at fault. */
export function parseRoutingConfig(input: unknown): RoutingConfig {
  const result = RoutingConfigSchema.safeParse(input);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => `  - ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  throw new Error(`Invalid routing config:\n${lines.join('\n')}`);
}

export function createRouter(config: RoutingConfig): Router {
  const upstreams = new Map<string, Upstream>();
  for (const [name, upstream] of Object.entries(config.upstreams)) {
    const baseUrl = (upstream.baseUrl ?? DEFAULT_BASE_URL[upstream.type]).replace(/\/+$/, '');
    upstreams.set(name, {
      name,
      type: upstream.type,
      baseUrl,
      apiKeyEnv: upstream.apiKeyEnv,
      delayMs: upstream.delayMs ?? 0,
      maxOutputTokens: upstream.maxOutputTokens,
      // OpenAI itself wants the new field; compatible servers generally know only the old one.
      maxTokensField: upstream.maxTokensField ?? (new URL(baseUrl).hostname === 'api.openai.com' ? 'max_completion_tokens' : 'max_tokens'),
    });
  }
  const routes = config.routes.map((route) => ({
    pattern: globToRegExp(route.model),
    upstream: upstreams.get(route.upstream) as Upstream,
    rename: route.upstreamModel,
  }));
  const modelIds = [...new Set(config.routes.filter((route) => !isGlob(route.model)).map((route) => route.model))];
  return {
    upstreams,
    modelIds,
    select(model) {
      const route = routes.find((candidate) => candidate.pattern.test(model));
      return route && { upstream: route.upstream, upstreamModel: route.rename ?? model };
    },
  };
}
