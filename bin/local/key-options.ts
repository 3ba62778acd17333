import type { KeyLimits } from '../../lambda/auth/key-table.ts';
import { parseMicroUsd } from '../../lambda/usage/cost.ts';
import { utcDay } from '../../lambda/usage/usage-table.ts';

export { parseMicroUsd };

/** A mistake in how the CLI was called: printed with the usage text, exit code 2. */
export class UsageError extends Error {}

const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86400 } as const;

/** `30d` -> seconds. */
export function parseDuration(flag: string, text: string): number {
  const match = /^(\d+)([smhd])$/.exec(text.trim());
  if (!match) throw new UsageError(`${flag} must be a number and a unit (s, m, h, d), like 30d; got "${text}"`);
  const seconds = Number(match[1]) * UNIT_SECONDS[match[2] as keyof typeof UNIT_SECONDS];
  if (seconds === 0) throw new UsageError(`${flag} must be more than zero`);
  return seconds;
}

/** `--expires-in 30d` -> epoch seconds; `never` -> null (update only). */
export function parseExpiry(text: string | undefined, allowNever: boolean, now = Date.now()): number | null | undefined {
  if (text === undefined) return undefined;
  if (allowNever && text === 'never') return null;
  return Math.floor(now / 1000) + parseDuration('--expires-in', text);
}

/** `--models a,b*` -> globs; `any` -> null (update only). */
export function parseModels(text: string | undefined, allowAny: boolean): string[] | null | undefined {
  if (text === undefined) return undefined;
  if (allowAny && text === 'any') return null;
  const globs = text.split(',').map((glob) => glob.trim()).filter((glob) => glob.length > 0);
  if (globs.length === 0) throw new UsageError('--models needs at least one model name or glob');
  return globs;
}

export const LIMIT_FLAGS = {
  rpm: 'requestsPerMinute',
  'tokens-per-day': 'tokensPerDay',
  'tokens-per-month': 'tokensPerMonth',
  'max-tokens': 'maxOutputTokens',
  'usd-per-day': 'microUsdPerDay',
  'usd-per-month': 'microUsdPerMonth',
  'max-in-flight': 'maxInFlight',
} as const satisfies Record<string, keyof KeyLimits>;

/** Dollar flags: amounts in USD, stored as micro-dollars. */
const DOLLAR_FLAGS = new Set<keyof typeof LIMIT_FLAGS>(['usd-per-day', 'usd-per-month']);

/**
 * Limit flags -> limits. Token and request limits are whole numbers above zero; dollar budgets
 * are amounts above zero with at most six decimals (0.0001 is a hundredth of a cent). With
 * `allowNone`, `none` removes a limit. Returns the limits to set and the names to remove.
 */
export function parseLimits(values: Partial<Record<keyof typeof LIMIT_FLAGS, string>>, allowNone: boolean): { set: KeyLimits; remove: (keyof KeyLimits)[] } {
  const set: KeyLimits = {};
  const remove: (keyof KeyLimits)[] = [];
  const orNone = allowNone ? ' (or none to remove the limit)' : '';
  for (const [flag, name] of Object.entries(LIMIT_FLAGS) as [keyof typeof LIMIT_FLAGS, keyof KeyLimits][]) {
    const text = values[flag];
    if (text === undefined) continue;
    if (allowNone && text === 'none') {
      remove.push(name);
      continue;
    }
    if (DOLLAR_FLAGS.has(flag)) {
      const micro = parseMicroUsd(text);
      if (micro === undefined) throw new UsageError(`--${flag} must be an amount in US dollars above 0 with at most 6 decimals, like 25 or 0.0001${orNone}; got "${text}"`);
      set[name] = micro;
      continue;
    }
    if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) {
      throw new UsageError(`--${flag} must be a whole number above 0${orNone}; got "${text}"`);
    }
    set[name] = Number(text);
  }
  return { set, remove };
}

/** `--since 2026-11-01` or `--since 7d` -> a UTC day; default: the first of this month. */
export function parseSince(text: string | undefined, now = new Date()): string {
  if (text === undefined) return `${utcDay(now).slice(0, 7)}-01`;
  if (/^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(`${text}T00:00:00Z`))) return text;
  if (/^\d+[smhd]$/.test(text)) return utcDay(new Date(now.getTime() - parseDuration('--since', text) * 1000));
  throw new UsageError(`--since must be a date (2026-11-01) or a duration back from now (7d); got "${text}"`);
}
