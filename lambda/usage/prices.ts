import { globToRegExp } from '../config/glob.ts';
import { completePrice, type ModelPrice, type PricesConfig, type Rates } from '../config/prices.ts';
import { PRICE_TABLE } from './price-table.ts';

/** [input, output, cache read, cache write 5-minute, cache write 1-hour], USD per million tokens. */
export type RateTuple = readonly [number, number, number, number, number];

/** One row of the generated table (lambda/usage/price-table.ts). */
export interface PriceRow {
  id: string;
  /** Lower-case globs of the model names this price applies to. */
  models: readonly string[];
  rates: RateTuple;
  /** [above this many prompt tokens, rates]. */
  tiers?: readonly (readonly [number, RateTuple])[];
  /** Which rates were derived from the provider's rule because the source lacks them. */
  derived?: string;
}

/**
 * What an unknown model is metered at when the config sets no `"*"` price: $5 / $25 per million
 * input / output tokens (the unknown-model tier of Anthropic's Claude apps gateway), cache reads
 * at the input price, writes at 1.25x / 2x. Never free; such requests are flagged.
 */
export const DEFAULT_FALLBACK_PRICE: ModelPrice = completePrice({ inputPerMTok: 5, outputPerMTok: 25 });

export interface PriceMatch {
  price: ModelPrice;
  /** `config`: the routing config's "prices"; `table`: the built-in table; `fallback`: no price known (flag it). */
  source: 'config' | 'table' | 'fallback';
  /** The glob that matched (`*` for the fallback). */
  pattern: string;
  /** The candidate name that matched; undefined for the fallback. */
  model: string | undefined;
  /** For the fallback: the routing config chose it (`"*"` in its prices), rather than the built-in default. */
  configuredFallback?: boolean;
}

export interface PriceBook {
  /**
   * The price for a request: `models` in order of preference, the model the upstream was asked
   * for first, then the client's name. Config prices beat the table for any candidate; within
   * each, the glob with the most literal characters wins (so `claude-opus-5-5*` beats
   * `claude-opus-5*` whatever the order), ties going to the first listed.
   */
  lookup(...models: (string | undefined)[]): PriceMatch;
}

interface Pattern {
  glob: string;
  /** The glob's text before its first wildcard: a name must start with it (a cheap test before the regular expression). */
  prefix: string;
  literal: number;
  price: ModelPrice;
  /** Compiled the first time a name passes the prefix test: most globs are never compiled. */
  regExp?: RegExp;
}

function compile(glob: string, price: ModelPrice): Pattern {
  const wildcard = glob.search(/[*?]/);
  return { glob, prefix: wildcard === -1 ? glob : glob.slice(0, wildcard), literal: glob.replace(/[*?]/g, '').length, price };
}

function matches(pattern: Pattern, name: string): boolean {
  if (!name.startsWith(pattern.prefix)) return false;
  if (pattern.prefix.length === pattern.glob.length) return name === pattern.glob;
  pattern.regExp ??= globToRegExp(pattern.glob);
  return pattern.regExp.test(name);
}

function toRates([inputPerMTok, outputPerMTok, cacheReadPerMTok, cacheWritePerMTok, cacheWrite1hPerMTok]: RateTuple): Rates {
  return { inputPerMTok, outputPerMTok, cacheReadPerMTok, cacheWritePerMTok, cacheWrite1hPerMTok };
}

export function rowPrice(row: PriceRow): ModelPrice {
  return { ...toRates(row.rates), tiers: (row.tiers ?? []).map(([aboveInputTokens, rates]) => ({ ...toRates(rates), aboveInputTokens })) };
}

function best(patterns: readonly Pattern[], name: string): Pattern | undefined {
  let found: Pattern | undefined;
  for (const pattern of patterns) if (matches(pattern, name) && (found === undefined || pattern.literal > found.literal)) found = pattern;
  return found;
}

/** Lookups are cached per name pair; a gateway sees a handful of models, this bound is a safety net. */
const CACHE_LIMIT = 1_000;

export function createPriceBook(config: PricesConfig = {}, table: readonly PriceRow[] = PRICE_TABLE): PriceBook {
  const configured: Pattern[] = [];
  let fallback = DEFAULT_FALLBACK_PRICE;
  let configuredFallback = false;
  for (const [glob, entry] of Object.entries(config)) {
    if (glob === '*') {
      fallback = completePrice(entry);
      configuredFallback = true;
    } else configured.push(compile(glob, completePrice(entry)));
  }
  // The table's few hundred globs are read at the first lookup, which comes after the first
  // response has been sent: nothing of it is on a cold start's path to the first answer.
  let builtIn: Pattern[] | undefined;
  const tablePatterns = () =>
    (builtIn ??= table.flatMap((row) => {
      const price = rowPrice(row);
      return row.models.map((glob) => compile(glob, price));
    }));
  const cache = new Map<string, PriceMatch>();

  function find(candidates: string[]): PriceMatch {
    for (const model of candidates) {
      const hit = best(configured, model);
      if (hit) return { price: hit.price, source: 'config', pattern: hit.glob, model };
    }
    for (const model of candidates) {
      // Table globs are lower case; provider ids are too, but clients may send any case.
      const hit = best(tablePatterns(), model.toLowerCase());
      if (hit) return { price: hit.price, source: 'table', pattern: hit.glob, model };
    }
    return { price: fallback, source: 'fallback', pattern: '*', model: undefined, configuredFallback };
  }

  return {
    lookup(...models) {
      const candidates = [...new Set(models.filter((model): model is string => typeof model === 'string' && model.length > 0))];
      const key = candidates.join('\n');
      let match = cache.get(key);
      if (match === undefined) {
        if (cache.size >= CACHE_LIMIT) cache.clear();
        match = find(candidates);
        cache.set(key, match);
      }
      return match;
    },
  };
}
