import { GatewayError } from '../errors.ts';
import type { Family } from '../routes.ts';
import { UNIFIED, type BudgetCap } from './budget-headers.ts';
import { formatUsdShort } from './cost.ts';

/**
 * The refusal of a request whose spend limit is reached, in words a developer acts on: which
 * limit, when it resets, what to do next. Anthropic's format renders it as `429 billing_error`
 * (Claude Code prints the message as it is, since the headers carry no representative claim),
 * OpenAI's as `429 insufficient_quota`; `x-should-retry: false` and `retry-after` (seconds to the
 * reset) come with it, the `anthropic-ratelimit-unified-*` headers from the request's state.
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const PERIOD_WORDS = { day: 'daily', week: 'weekly', month: 'monthly' } as const;

/** `Aug 8, 00:00 UTC`: caps reset at UTC midnight, which is not the reader's midnight. */
export function resetWords(epochMs: number): string {
  const at = new Date(epochMs);
  return `${MONTHS[at.getUTCMonth()]} ${at.getUTCDate()}, ${at.toISOString().slice(11, 16)} UTC`;
}

/** What the person is told to do next when the admin configured nothing (`identity.caps.blockedMessage`). */
export const DEFAULT_NEXT_STEP = 'ask your gateway admin to raise it';

export function spendRefusal(cap: BudgetCap, at: Date, nextStep: string | undefined): GatewayError {
  const retryAfter = String(Math.max(1, Math.ceil((cap.resetsAt - at.getTime()) / 1000)));
  const next = nextStep ?? DEFAULT_NEXT_STEP;
  if (cap.scope === 'group_pool') {
    return new GatewayError('budget_exhausted', `Your group's shared budget is used up (${cap.group}: ${formatUsdShort(cap.limit)} a month) · resets ${resetWords(cap.resetsAt)} · ${next}`, { headers: { 'retry-after': retryAfter }, code: 'insufficient_quota' });
  }
  if (cap.scope === 'person') {
    const period = PERIOD_WORDS[cap.period];
    return new GatewayError('budget_exhausted', `Your ${period} spend limit (${formatUsdShort(cap.limit)}) on this gateway is reached · resets ${resetWords(cap.resetsAt)} · ${next}`, { headers: { 'retry-after': retryAfter }, code: 'insufficient_quota' });
  }
  // A key's own budgets, worded as they always were.
  if (cap.kind === 'tokens') {
    return new GatewayError('rate_limit', `This API key has used its ${cap.limit} tokens for the ${cap.period}.`, { headers: { 'retry-after': retryAfter }, code: 'token_budget_exceeded' });
  }
  return new GatewayError('budget_exhausted', `This API key has spent its ${formatUsdShort(cap.limit)} budget for the ${cap.period}; it resets at ${new Date(cap.resetsAt).toISOString()}.`, { headers: { 'retry-after': retryAfter }, code: 'insufficient_quota' });
}

/**
 * A spend counter could not be read, and the gateway fails closed. Claude Code's gateway protocol
 * gives the shape for Anthropic's format: 429 `billing_error`, `x-should-retry: false`,
 * `overage-disabled-reason: fetch_error`, a message and nothing else (the caller clears the
 * other unified headers). OpenAI's clients get a 503 they retry with backoff.
 */
export function spendUnreadable(family: Family, cause: unknown): GatewayError {
  const message = 'Your spend limit could not be checked just now, so the request was not sent; try again in a minute.';
  if (family === 'messages') return new GatewayError('budget_exhausted', message, { headers: { [`${UNIFIED}overage-disabled-reason`]: 'fetch_error' }, cause });
  return new GatewayError('overloaded', message, { headers: { 'retry-after': '30' }, code: 'spend_check_unavailable', cause });
}
