import type { KeyLimits } from '../auth/key-table.ts';
import type { CapSource } from '../identity/principal.ts';
import { periodEnd, usageInPeriods, type BudgetPeriod } from './limits.ts';
import type { DayUsage } from './usage-store.ts';

/**
 * The `anthropic-ratelimit-unified-*` headers that tell Claude Code how much of its own budget
 * a caller has used (a key's budgets, a person's caps, a group pool), so it can warn at 75 % and
 * 95 % and show a spend-limit bar in `/usage`.
 * The names and value forms are those of Anthropic's own Claude apps gateway, which Claude Code
 * is built to read; evidence and what each header does in the client: docs/claude-code-budget-headers.md.
 */
export const UNIFIED = 'anthropic-ratelimit-unified-';

/** Claude Code's warning thresholds (the Claude apps gateway's are the same, highest first). */
const THRESHOLDS = [0.95, 0.75] as const;

/** The Claude apps gateway's period names (`daily`, `weekly`, `monthly`). */
export const PERIOD_NAMES: Record<BudgetPeriod, string> = { day: 'daily', week: 'weekly', month: 'monthly' };

export interface BudgetCap {
  kind: 'usd' | 'tokens';
  /** Whose budget: the key's own, the person's cap, or a budget the person's group shares (absent: the key's). */
  scope?: 'key' | 'person' | 'group_pool';
  /** A pool's group; a person's cap's origin (their own, a group's, the default). */
  group?: string;
  source?: CapSource;
  period: BudgetPeriod;
  /** Micro-dollars or tokens. */
  limit: number;
  used: number;
  /** Epoch ms at which the period ends. */
  resetsAt: number;
}

/** Every budget the key has, with its use so far. */
export function budgetCaps(limits: KeyLimits | undefined, days: readonly DayUsage[], at: Date): BudgetCap[] {
  if (!limits) return [];
  const use = usageInPeriods(days, at);
  const caps: BudgetCap[] = [];
  const add = (kind: BudgetCap['kind'], period: BudgetPeriod, limit: number | undefined, used: number) => {
    if (limit !== undefined) caps.push({ kind, period, limit, used, resetsAt: periodEnd(period, at) });
  };
  add('usd', 'day', limits.microUsdPerDay, use.day.costMicroUsd);
  add('usd', 'month', limits.microUsdPerMonth, use.month.costMicroUsd);
  add('tokens', 'day', limits.tokensPerDay, use.day.tokens);
  add('tokens', 'month', limits.tokensPerMonth, use.month.tokens);
  return caps;
}

export const exceeded = (cap: BudgetCap) => cap.used >= cap.limit;
export const utilization = (cap: BudgetCap) => (cap.limit > 0 ? cap.used / cap.limit : 1);

/**
 * The fraction of a cap used as the headers state it: two decimals, held at 0.99 until the cap
 * is actually spent (so the client never shows 100 % while requests are still allowed).
 */
export function shownUtilization(cap: BudgetCap): number {
  const fraction = Math.round(utilization(cap) * 100) / 100;
  return exceeded(cap) ? fraction : Math.min(fraction, 0.99);
}

/**
 * The cap the headers describe: a spent one before any other (of several, the one resetting
 * last), otherwise the most used. The same choice as the Claude apps gateway.
 */
export function bindingCap(caps: readonly BudgetCap[]): BudgetCap | undefined {
  let binding: BudgetCap | undefined;
  for (const cap of caps) {
    if (binding === undefined) binding = cap;
    else if (exceeded(cap) !== exceeded(binding)) binding = exceeded(cap) ? cap : binding;
    else if (exceeded(cap)) binding = cap.resetsAt > binding.resetsAt ? cap : binding;
    else if (utilization(cap) > utilization(binding)) binding = cap;
  }
  return binding;
}

/** Headers for a response to a key with budgets: key limits + use so far (the month's day items) + now. Empty without budgets. */
export function budgetHeaders(limits: KeyLimits | undefined, days: readonly DayUsage[], at: Date): Record<string, string> {
  return capHeaders(bindingCap(budgetCaps(limits, days, at)), at);
}

/**
 * The headers describing one cap (the binding one of all that apply to a request; none: no
 * headers, as for a caller without caps). Utilization as `shownUtilization`; resets are epoch
 * seconds. A spent cap gets the refusal's shape: no representative claim or overage status (the
 * client then prints the gateway's message as it is), `retry-after`, and for a group's pool the
 * `overage-scope`.
 */
export function capHeaders(cap: BudgetCap | undefined, at: Date): Record<string, string> {
  if (!cap) return {};
  const spent = exceeded(cap);
  const threshold = spent ? 1 : THRESHOLDS.find((level) => utilization(cap) > level);
  const status = spent ? 'rejected' : threshold !== undefined ? 'allowed_warning' : 'allowed';
  const reset = String(Math.floor(cap.resetsAt / 1000));
  const headers: Record<string, string> = {
    [`${UNIFIED}status`]: status,
    [`${UNIFIED}reset`]: reset,
    [`${UNIFIED}overage-reset`]: reset,
    [`${UNIFIED}overage-utilization`]: String(shownUtilization(cap)),
  };
  if (threshold !== undefined) headers[`${UNIFIED}overage-surpassed-threshold`] = String(threshold);
  if (spent) {
    headers[`${UNIFIED}overage-period`] = PERIOD_NAMES[cap.period];
    if (cap.scope === 'group_pool') headers[`${UNIFIED}overage-scope`] = 'group_pool';
    headers[`${UNIFIED}overage-disabled-reason`] = 'org_spend_cap_reached';
    headers['retry-after'] = String(Math.max(1, Math.ceil((cap.resetsAt - at.getTime()) / 1000)));
  } else {
    headers[`${UNIFIED}representative-claim`] = 'overage';
    headers[`${UNIFIED}overage-status`] = status;
  }
  return headers;
}
