import type { ModelPrice, Rates } from '../config/prices.ts';
import type { Usage } from '../observability/usage.ts';

/**
 * What one request cost, in micro-dollars (1e-6 USD, an integer). A price per million tokens
 * is also micro-dollars per token, so cost = sum(tokens x rate), times a premium tier's
 * `multiplier`, plus server-tool calls priced per call (`perCallMicroUsd`). Rates are taken to 6 decimals
 * and multiplied as integers (BigInt), and the sum is rounded once per request, half up to the
 * micro-dollar: no floating-point drift, and a day's counter is the exact sum of its requests.
 */
export function costMicroUsd(usage: Usage, price: ModelPrice, extra: { multiplier?: number; perCallMicroUsd?: number } = {}): number {
  const rates = ratesFor(price, promptTokens(usage));
  const write1h = Math.min(usage.cacheWrite1hTokens ?? 0, usage.cacheWriteTokens);
  const parts: [number, number][] = [
    [usage.inputTokens, rates.inputPerMTok],
    [usage.outputTokens, rates.outputPerMTok],
    [usage.cacheReadTokens, rates.cacheReadPerMTok],
    [usage.cacheWriteTokens - write1h, rates.cacheWritePerMTok],
    [write1h, rates.cacheWrite1hPerMTok],
  ];
  let picoUsd = 0n; // micro-dollars x 1e6
  for (const [tokens, rate] of parts) picoUsd += BigInt(Math.max(0, Math.trunc(tokens))) * BigInt(Math.round(rate * 1e6));
  // A premium tier multiplies every token price (taken to four decimals, multiplied exactly).
  if (extra.multiplier !== undefined && extra.multiplier !== 1) picoUsd = (picoUsd * BigInt(Math.round(extra.multiplier * 1e4))) / 10_000n;
  return Number((picoUsd + 500_000n) / 1_000_000n) + (extra.perCallMicroUsd ?? 0);
}

/** The prompt size tiers are chosen by: everything on the input side, cached or not. */
export function promptTokens(usage: Usage): number {
  return usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
}

/**
 * The rates for a request of `prompt` tokens: the highest tier whose threshold the prompt
 * exceeds prices the whole request (Anthropic's and OpenAI's long-context rule), else the base.
 */
export function ratesFor(price: ModelPrice, prompt: number): Rates {
  let rates: Rates = price;
  for (const tier of price.tiers) if (prompt > tier.aboveInputTokens) rates = tier;
  return rates;
}

/** Micro-dollars as a decimal dollar amount (`costUsd` in the CLI's JSON). */
export function microToUsd(micro: number): number {
  return micro / 1e6;
}

/** `$0.004213`: six decimals, the counters' precision. */
export function formatUsd(micro: number): string {
  return `$${(micro / 1e6).toFixed(6)}`;
}

/** Dollars as people write them: `$5.00`, `$0.0001` (cents always shown, no trailing zeros beyond). */
export function formatUsdShort(micro: number): string {
  const [whole, fraction = ''] = (micro / 1e6).toFixed(6).split('.');
  return `$${whole}.${fraction.replace(/0+$/, '').padEnd(2, '0')}`;
}

/**
 * `12.5` -> 12_500_000 micro-dollars, by string arithmetic (no binary rounding): at most six
 * decimals, above zero. Undefined when the text is not such an amount. The key CLI's dollar
 * flags and the console's dollar fields read amounts with it.
 */
export function parseMicroUsd(text: string): number | undefined {
  const match = /^(\d*)(?:\.(\d{1,6}))?$/.exec(text);
  if (!match || (match[1] === '' && match[2] === undefined)) return undefined;
  const micro = Number(match[1] || '0') * 1e6 + Number((match[2] ?? '').padEnd(6, '0'));
  return micro >= 1 && Number.isSafeInteger(micro) ? micro : undefined;
}
