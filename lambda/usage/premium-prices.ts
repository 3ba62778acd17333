import { globToRegExp, matchesAny } from '../config/glob.ts';
import type { PremiumTier } from '../config/prices.ts';

/**
 * What requests cost beyond their tokens at standard rates: premium processing tiers, which
 * multiply every token price (input, output, cache reads and writes alike), US-only inference,
 * and server-side tool calls priced per call. The per-token table (price-table.ts, generated
 * from @pydantic/genai-prices) has none of these, so they are kept here by hand from the
 * providers' pricing pages, read 2026-11-26; docs/security.md cites them. The routing config's
 * `prices` entries may set `multipliers` of their own, which win.
 */

/** Model globs (lower case) -> tier multipliers, each the published tier price over the standard one. */
const TIER_MULTIPLIERS: readonly { models: readonly string[]; multipliers: Partial<Record<PremiumTier, number>> }[] = [
  // OpenAI Fast mode (formerly Priority processing), https://openai.com/api-fast-mode/ and
  // https://openai.com/api-priority-processing/: GPT-5.5 $12.50/$75 against $5/$30 (2.5x);
  // GPT-6, GPT-5.6, GPT-5.4, 5.2, 5.1, 5 and their codex models 2x; GPT-5 mini $0.45/$3.60
  // against $0.25/$2 (1.8x); o4-mini $2/$8 against $1.10/$4.40; GPT-4.1 and o3 1.75x.
  { models: ['gpt-5.5*', 'gpt-5-5*'], multipliers: { priority: 2.5 } },
  { models: ['gpt-5-mini*'], multipliers: { priority: 1.8 } },
  { models: ['o4-mini*'], multipliers: { priority: 1.82 } },
  { models: ['gpt-4.1*', 'o3', 'o3-*'], multipliers: { priority: 1.75 } },
  { models: ['gpt-6*', 'gpt-5.6*', 'gpt-5-6*', 'gpt-5.4*', 'gpt-5-4*', 'gpt-5.2*', 'gpt-5-2*', 'gpt-5.1*', 'gpt-5-1*', 'gpt-5', 'gpt-5-*'], multipliers: { priority: 2 } },
  // Anthropic fast mode (`speed: "fast"`), https://platform.claude.com/docs/en/build-with-claude/fast-mode:
  // Claude Opus 4.8 $10/$50 against $5/$25 (2x); Opus 4.6 and 4.7 $30/$150 (6x); fast mode
  // "stacks with other pricing modifiers" (caching, long context). Newer models' fast prices
  // were not on the page: they take UNPUBLISHED_TIER_MULTIPLIER until `prices` says otherwise.
  { models: ['claude-opus-4-8*', 'claude-opus-4.8*'], multipliers: { fast: 2 } },
  { models: ['claude-opus-4-6*', 'claude-opus-4.6*', 'claude-opus-4-7*', 'claude-opus-4.7*'], multipliers: { fast: 6 } },
];

/**
 * A tier no table row prices for the model is charged at the highest published multiplier of any
 * tier (Anthropic's 6x): never under-billed, and said in the docs. OpenAI's Ultrafast has no
 * published price, so it is always charged so unless `prices` gives `multipliers.ultrafast`.
 */
export const UNPUBLISHED_TIER_MULTIPLIER = 6;

/** US-only inference (`inference_geo: "us"`) is 1.1x on Claude Opus 4.6, Sonnet 4.6 and later (https://platform.claude.com/docs/en/about-claude/pricing). */
export const US_ONLY_INFERENCE_MULTIPLIER = 1.1;

/**
 * Server-side tool calls, micro-dollars per call. Web search is $10 per 1,000 calls on both
 * APIs (https://platform.claude.com/docs/en/agents-and-tools/tool-use/web-search-tool,
 * https://platform.openai.com/docs/pricing), $25 per 1,000 for OpenAI's `web_search_preview`
 * on non-reasoning models; Anthropic's web fetch costs only the tokens it brings in; OpenAI's
 * file search is $2.50 per 1,000 calls and a code interpreter container $0.03.
 */
export const SERVER_TOOL_MICRO_USD: Readonly<Record<string, number>> = { web_search: 10_000, web_search_preview: 25_000, web_fetch: 0, file_search: 2_500, code_interpreter: 30_000 };

/** A server tool with no known price (one the providers add later) is charged as a web search, the dearest per-call price known. */
export const UNKNOWN_SERVER_TOOL_MICRO_USD = 25_000;

let compiled: { models: RegExp[]; multipliers: Partial<Record<PremiumTier, number>> }[] | undefined;

/** The published multiplier of `tier` for the first of `models` (the upstream's name, then the client's) a row names, else UNPUBLISHED_TIER_MULTIPLIER. */
export function tierMultiplier(tier: PremiumTier, models: readonly string[]): number {
  compiled ??= TIER_MULTIPLIERS.map((row) => ({ models: row.models.map(globToRegExp), multipliers: row.multipliers }));
  for (const model of models) {
    const name = model.toLowerCase();
    for (const row of compiled) {
      const multiplier = row.multipliers[tier];
      if (multiplier !== undefined && matchesAny(row.models, name)) return multiplier;
    }
  }
  return UNPUBLISHED_TIER_MULTIPLIER;
}
