import * as z from 'zod/mini';
import { describeIssue } from './issues.ts';

/**
 * The routing config's optional `"prices"`: model globs -> USD per million tokens. They add to
 * and override the built-in table (lambda/usage/price-table.ts); the glob `"*"` sets the
 * fallback price for models nothing else prices. Exported for the routing-config parser.
 *
 * @example
 * "prices": {
 *   "claude-sonnet-5*": { "inputPerMTok": 2, "outputPerMTok": 10, "cacheReadPerMTok": 0.2,
 *                         "cacheWritePerMTok": 2.5, "cacheWrite1hPerMTok": 4 },
 *   "team-model": { "inputPerMTok": 3, "outputPerMTok": 15,
 *                   "tiers": [{ "aboveInputTokens": 200000, "inputPerMTok": 6, "outputPerMTok": 22.5 }] },
 *   "*": { "inputPerMTok": 5, "outputPerMTok": 25 }
 * }
 */
const perMTok = z.number().check(z.minimum(0), z.maximum(1_000_000));

const RATE_FIELDS = {
  inputPerMTok: perMTok,
  outputPerMTok: perMTok,
  /** Prompt-cache reads. Omitted: the input price (no discount assumed, so never under-billed). */
  cacheReadPerMTok: z.optional(perMTok),
  /** 5-minute prompt-cache writes. Omitted: 1.25x input (Anthropic's published rule). */
  cacheWritePerMTok: z.optional(perMTok),
  /** 1-hour prompt-cache writes (Anthropic only). Omitted: 2x input (Anthropic's published rule). */
  cacheWrite1hPerMTok: z.optional(perMTok),
};

/** Above `aboveInputTokens` prompt tokens the whole request is priced at the tier's rates. */
const TierSchema = z.strictObject({
  aboveInputTokens: z.int().check(z.minimum(0)),
  inputPerMTok: z.optional(perMTok),
  outputPerMTok: z.optional(perMTok),
  cacheReadPerMTok: z.optional(perMTok),
  cacheWritePerMTok: z.optional(perMTok),
  cacheWrite1hPerMTok: z.optional(perMTok),
});

/**
 * Premium processing tiers, as multipliers of every token rate: `priority` (OpenAI's Fast mode,
 * `service_tier: "priority"` or `"fast"`), `fast` (Anthropic's `speed: "fast"`), `ultrafast`.
 * Omitted: the published multiplier (lambda/usage/premium-prices.ts), else the highest one.
 */
const multiplier = z.optional(z.number().check(z.minimum(1), z.maximum(100)));
const MultipliersSchema = z.strictObject({ priority: multiplier, fast: multiplier, ultrafast: multiplier });

/** Processing tiers priced above standard; a route allows them with `serviceTiers` (config/routing-schema.ts). */
export const PREMIUM_TIERS = ['priority', 'fast', 'ultrafast'] as const;
export type PremiumTier = (typeof PREMIUM_TIERS)[number];

export const ModelPriceSchema = z.strictObject({
  ...RATE_FIELDS,
  multipliers: z.optional(MultipliersSchema),
  tiers: z.optional(
    z.array(TierSchema).check(
      z.refine((tiers) => new Set(tiers.map((tier) => tier.aboveInputTokens)).size === tiers.length, 'each tier needs its own aboveInputTokens'),
    ),
  ),
});

export const PricesConfigSchema = z.record(z.string().check(z.minLength(1)), ModelPriceSchema);

export type ModelPriceConfig = z.infer<typeof ModelPriceSchema>;
export type PricesConfig = z.infer<typeof PricesConfigSchema>;

/** Every rate filled in, USD per million tokens. */
export interface Rates {
  inputPerMTok: number;
  outputPerMTok: number;
  cacheReadPerMTok: number;
  cacheWritePerMTok: number;
  cacheWrite1hPerMTok: number;
}

/** A complete price: base rates and tiers ascending by size, what cost arithmetic uses. */
export interface ModelPrice extends Rates {
  tiers: (Rates & { aboveInputTokens: number })[];
  /** Premium tier multipliers the config sets for this price (others: lambda/usage/premium-prices.ts). */
  multipliers?: z.infer<typeof MultipliersSchema>;
}

/** Fills the rates a config entry omits (see the field comments); tier fields default to the base. */
export function completePrice(config: ModelPriceConfig): ModelPrice {
  const base: Rates = {
    inputPerMTok: config.inputPerMTok,
    outputPerMTok: config.outputPerMTok,
    cacheReadPerMTok: config.cacheReadPerMTok ?? config.inputPerMTok,
    cacheWritePerMTok: config.cacheWritePerMTok ?? config.inputPerMTok * 1.25,
    cacheWrite1hPerMTok: config.cacheWrite1hPerMTok ?? config.inputPerMTok * 2,
  };
  const tiers = [...(config.tiers ?? [])]
    .sort((a, b) => a.aboveInputTokens - b.aboveInputTokens)
    .map(({ aboveInputTokens, ...rates }) => ({ ...base, ...definedOnly(rates), aboveInputTokens }));
  return { ...base, tiers, ...(config.multipliers ? { multipliers: config.multipliers } : {}) };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as Partial<T>;
}

/** Validates a `"prices"` object; throws with one line per problem naming the field. */
export function parsePricesConfig(input: unknown, path = 'prices'): PricesConfig {
  const result = PricesConfigSchema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => `  - ${[path, ...issue.path].join('.')}: ${describeIssue(issue)}`);
  throw new Error(`Invalid prices:\n${lines.join('\n')}`);
}
