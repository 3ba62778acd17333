/**
 * Regenerates lambda/usage/price-table.ts, the gateway's default price table, from the pinned
 * devDependency `@pydantic/genai-prices` (MIT; https://github.com/pydantic/genai-prices), a
 * maintained table of provider list prices that keeps 5-minute and 1-hour cache writes apart
 * and carries long-context tiers. Offline: it reads the copy in node_modules, never the network.
 *
 *   npm run prices            # rewrite the table
 *   npm run prices -- --check # exit 1 if the committed table differs (dates aside)
 *
 * Only current Claude and OpenAI chat/reasoning models and their Amazon Bedrock ids are kept.
 * Where the source lacks a price the gateway needs, it is derived from the provider's published
 * rule and the row says so (`derived`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { globToRegExp } from '../lambda/config/glob.ts';
import { findProvider, type MatchLogic, type ModelInfo, type ModelPrice, type TieredPrices } from '@pydantic/genai-prices';

const OUTPUT = fileURLToPath(new URL('../lambda/usage/price-table.ts', import.meta.url));
const PACKAGE = '@pydantic/genai-prices';

/** Source model ids kept, per provider, in the order they are written. */
const ANTHROPIC = [
  'claude-opus-5-5', 'claude-opus-5', 'claude-fable-5-1', 'claude-fable-5', 'claude-sonnet-5',
  'claude-opus-4-8', 'claude-opus-4-7', 'claude-opus-4-6', 'claude-opus-4-5', 'claude-opus-4-1', 'claude-opus-4-0',
  'claude-sonnet-4-6', 'claude-sonnet-4-5', 'claude-sonnet-4-0', 'claude-haiku-4-5',
];
const OPENAI = [
  'gpt-6-astra', 'gpt-6-sol', 'gpt-6-luna', 'gpt-5.6-sol', 'gpt-5.6-terra', 'gpt-5.6-luna',
  'gpt-5.5', 'gpt-5.5-pro', 'gpt-5.4', 'gpt-5.4-pro', 'gpt-5.4-mini', 'gpt-5.4-nano',
  'gpt-5.3', 'gpt-5.3-codex', 'gpt-5.2', 'gpt-5.2-pro', 'gpt-5.1', 'gpt-5.1-codex-mini',
  'gpt-5', 'gpt-5-mini', 'gpt-5-nano', 'gpt-5-pro', 'o3', 'o4-mini', 'gpt-4.1',
];
/** Bedrock: Claude 4 and later, and OpenAI's GPT models (not the open-weight gpt-oss). */
const BEDROCK = /^(global|regional)?\.?(anthropic\.claude-(opus|sonnet|haiku|fable)-[4-9]|openai\.gpt-[5-9])/;

const ANTHROPIC_RULE = 'https://platform.claude.com/docs/en/build-with-claude/prompt-caching#pricing';

type Rates = [input: number, output: number, cacheRead: number, cacheWrite5m: number, cacheWrite1h: number];
interface Row {
  id: string;
  models: string[];
  rates: Rates;
  tiers?: [aboveInputTokens: number, rates: Rates][];
  derived?: string;
}

/** The price in force at `at`: the last entry whose start date has passed. */
function priceAt(model: ModelInfo, at: Date): ModelPrice {
  if (!Array.isArray(model.prices)) return model.prices;
  let current = model.prices[0]?.prices as ModelPrice;
  for (const entry of model.prices) {
    const constraint = entry.constraint;
    if (constraint === undefined) current = entry.prices;
    else if (constraint.type === 'start_date' && new Date(constraint.start_date) <= at) current = entry.prices;
    else if (constraint.type !== 'start_date') throw new Error(`${model.id}: unsupported price constraint ${JSON.stringify(constraint)}`);
  }
  return current;
}

type Field = 'input_mtok' | 'output_mtok' | 'cache_read_mtok' | 'cache_write_mtok' | 'cache_write_1h_mtok';
const FIELDS: Field[] = ['input_mtok', 'output_mtok', 'cache_read_mtok', 'cache_write_mtok', 'cache_write_1h_mtok'];

function valueAt(price: ModelPrice, field: Field, promptTokens: number): number | undefined {
  const value = price[field] as number | TieredPrices | undefined;
  if (value === undefined || typeof value === 'number') return value;
  let result = value.base;
  for (const tier of value.tiers) if (promptTokens > tier.start) result = tier.price;
  return result;
}

/**
 * One set of rates at a prompt size, filling what the source lacks. Anthropic (and Claude on
 * Bedrock): reads 0.1x, 5-minute writes 1.25x, 1-hour writes 2x input (the published rule).
 * OpenAI: a missing cached-input price means no discount, a missing write price means writes
 * are plain input, and there is no 1-hour cache (the 5-minute price stands in).
 */
function rates(price: ModelPrice, family: 'anthropic' | 'openai', promptTokens: number, derived: Set<string>): Rates {
  const [input, output, read, write, write1h] = FIELDS.map((field) => valueAt(price, field, promptTokens));
  if (input === undefined || output === undefined) throw new Error('input and output prices are required');
  const fill = (value: number | undefined, name: string, anthropic: number, openai: number): number => {
    if (value !== undefined) return value;
    derived.add(name);
    return family === 'anthropic' ? anthropic : openai;
  };
  const cacheRead = fill(read, 'cacheRead', input * 0.1, input);
  const cacheWrite = fill(write, 'cacheWrite', input * 1.25, input);
  return [input, output, cacheRead, cacheWrite, fill(write1h, 'cacheWrite1h', input * 2, cacheWrite)].map(round) as Rates;
}

const round = (value: number): number => Math.round(value * 1e6) / 1e6;

function tierStarts(price: ModelPrice): number[] {
  const starts = new Set<number>();
  for (const field of FIELDS) {
    const value = price[field];
    if (typeof value === 'object') for (const tier of value.tiers) starts.add(tier.start);
  }
  return [...starts].sort((a, b) => a - b);
}

/** The source's match logic as gateway globs (`*` any run, `?` one character). */
function globs(match: MatchLogic): string[] {
  if ('or' in match) return match.or.flatMap(globs);
  if ('equals' in match) return [match.equals];
  if ('starts_with' in match) return [`${match.starts_with}*`];
  if ('ends_with' in match) return [`*${match.ends_with}`];
  if ('contains' in match) return [`*${match.contains}*`];
  if ('regex' in match) {
    // Dated snapshots: ^name-\d{8}$ and ^name-\d{4}-\d{2}-\d{2}$.
    const dated = /^\^(.+?)(\\d\{8\}|\\d\{4\}-\\d\{2\}-\\d\{2\})\$$/.exec(match.regex);
    if (dated) return [`${(dated[1] as string).replace(/\\\./g, '.')}${dated[2] === '\\d{8}' ? '????????' : '????-??-??'}`];
  }
  throw new Error(`cannot express ${JSON.stringify(match)} as a glob; extend bin/generate-prices.ts`);
}

/**
 * Bedrock globs: only Bedrock-namespaced names (bare names belong to the direct providers);
 * all geographic cross-region prefixes (us., eu., apac., jp., au., us-gov. ...) share one
 * price, so they collapse to `*.anthropic.x*`; in-region ids also match inside model ARNs.
 */
function bedrockGlobs(match: MatchLogic): string[] {
  const out = new Set<string>();
  for (const glob of globs(match)) {
    const core = glob.replace(/^\*|\*$/g, '');
    if (!/(^|\.)(anthropic|openai)\./.test(core)) continue;
    if (/^(global)\./.test(core)) out.add(`*${core}*`);
    else if (/^[a-z-]+\.(anthropic|openai)\./.test(core)) out.add(`*.${core.replace(/^[a-z-]+\./, '')}*`);
    else {
      const anchored = glob.startsWith('*') ? `*${core}*` : glob;
      out.add(anchored);
      if (!glob.startsWith('*')) out.add(`*/${glob}`);
    }
  }
  return [...out];
}

/** Drops globs another glob of the same row already covers (`*x-v1*` when `*x*` is there). */
function withoutSubsumed(models: string[]): string[] {
  const unique = [...new Set(models)];
  return unique.filter((glob) => !unique.some((other) => other !== glob && !other.includes('?') && globToRegExp(other).test(glob)));
}

function row(model: ModelInfo, family: 'anthropic' | 'openai', models: string[], at: Date): Row {
  const price = priceAt(model, at);
  const derived = new Set<string>();
  const result: Row = { id: model.id, models: withoutSubsumed(models), rates: rates(price, family, 0, derived) };
  const starts = tierStarts(price);
  if (starts.length > 0) result.tiers = starts.map((start) => [start, rates(price, family, start + 1, derived)]);
  if (derived.size > 0) result.derived = [...derived].join(',');
  return result;
}

function pick(providerId: string, ids: string[]): ModelInfo[] {
  const provider = findProvider({ providerId });
  if (!provider) throw new Error(`${PACKAGE} has no provider "${providerId}"`);
  return ids.map((id) => {
    const model = provider.models.find((candidate) => candidate.id === id);
    if (!model) throw new Error(`${PACKAGE}: provider "${providerId}" has no model "${id}"; update the list in bin/generate-prices.ts`);
    return model;
  });
}

export function buildRows(at: Date): Row[] {
  const rows: Row[] = [];
  for (const model of pick('anthropic', ANTHROPIC)) rows.push(row(model, 'anthropic', globs(model.match), at));
  for (const model of pick('openai', OPENAI)) rows.push(row(model, 'openai', globs(model.match), at));
  const bedrock = findProvider({ providerId: 'aws' });
  if (!bedrock) throw new Error(`${PACKAGE} has no provider "aws"`);
  for (const model of bedrock.models.filter((candidate) => BEDROCK.test(candidate.id))) {
    rows.push(row(model, model.id.includes('anthropic.') ? 'anthropic' : 'openai', bedrockGlobs(model.match), at));
  }
  return rows;
}

function render(rows: Row[], version: string, at: Date): string {
  const lines = rows.map((entry) => `  ${JSON.stringify(entry)},`);
  return `// Generated by \`npm run prices\` (bin/generate-prices.ts); do not edit by hand. Override prices in
// the routing config's "prices" instead (docs/keys-and-budgets.md, "Usage and limits").
import type { PriceRow } from './prices.ts';

/** Where the table comes from: list prices in USD per million tokens. */
export const PRICE_SOURCE = {
  name: '${PACKAGE}',
  version: '${version}',
  licence: 'MIT',
  url: 'https://github.com/pydantic/genai-prices',
  pricesInForceOn: '${at.toISOString().slice(0, 10)}',
} as const;

/**
 * rates: [input, output, cache read, cache write 5-minute, cache write 1-hour];
 * tiers: [above this many prompt tokens (input + cache read + cache write), rates for the whole request].
 * derived: rates the source lacks, filled by the provider's rule: Claude (also on Bedrock) cache
 * reads 0.1x, 5-minute writes 1.25x, 1-hour writes 2x input (${ANTHROPIC_RULE});
 * OpenAI has no separate cache-write price (writes are input) and no 1-hour cache (the 5-minute
 * price stands in), and a missing cached-input price means no discount.
 */
export const PRICE_TABLE: readonly PriceRow[] = [
${lines.join('\n')}
];
`;
}

/** The version actually installed (the package does not export its package.json). */
function installedVersion(): string {
  const manifest = new URL(`../node_modules/${PACKAGE}/package.json`, import.meta.url);
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const at = new Date();
  const text = render(buildRows(at), installedVersion(), at);
  if (process.argv.includes('--check')) {
    const withoutDate = (source: string) => source.replace(/pricesInForceOn: '[^']*'/, '');
    const same = withoutDate(readFileSync(OUTPUT, 'utf8')) === withoutDate(text);
    console.log(same ? 'price table is up to date' : 'price table differs from the pinned source: run npm run prices');
    process.exitCode = same ? 0 : 1;
  } else {
    writeFileSync(OUTPUT, text);
    console.log(`wrote ${OUTPUT}`);
  }
}
