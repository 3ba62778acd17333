import type { HandlerResponse } from '../deps.ts';
import { GatewayError } from '../errors.ts';
import { bindingCap, exceeded, PERIOD_NAMES, shownUtilization, utilization, type BudgetCap } from '../usage/budget-headers.ts';
import { periodsStart, usageInPeriods } from '../usage/limits.ts';
import { blockingCap, readSpendStanding, type SpendSubject } from '../usage/spend-standing.ts';
import { personAccount } from '../usage/usage-table.ts';
import type { IdentityContext } from './context.ts';
import type { IdentityRequest } from './http.ts';

/**
 * `GET /first/api/oauth/usage` (bearer): the caller's dollars for Claude Code's `/usage` and
 * status line, in the shape its gateway protocol gives (https://code.claude.com/docs/en/llm-gateway-protocol,
 * "Usage-limit headers"): the cap the response headers describe in `extra_usage`, one `limits`
 * row per dollar cap (cents as numbers, whole percents, `resets_at` the same instant as the
 * headers' reset); without a dollar cap, `limits: []` and the spend of this UTC day, week (from
 * Monday) and month. Read from the same counters and with the same choices as the request path
 * (usage/spend-standing.ts), so the page and the headers agree.
 */
export async function oauthUsage(context: IdentityContext, request: IdentityRequest): Promise<HandlerResponse> {
  const principal = request.principal;
  const readers = context.spend;
  if (!principal || !readers) throw new GatewayError('not_found', 'This gateway keeps no usage.');
  const person = principal.person;
  const policy = person ? await context.policyFor(principal) : undefined;
  const subject: SpendSubject = { ...(principal.key ? { key: principal.key } : {}), ...(person && policy ? { person, policy } : {}) };
  const now = new Date(context.now());
  try {
    const standing = await readSpendStanding(subject, readers, now);
    const blocking = blockingCap(standing);
    const caps = [...standing.caps.filter((cap) => cap.kind === 'usd'), ...(blocking?.scope === 'group_pool' ? [blocking] : [])];
    if (caps.length > 0) return answer(withCaps(caps, blocking ?? (bindingCap(caps) as BudgetCap)));
    const account = person ? personAccount(person.sub) : principal.key?.id;
    const use = usageInPeriods(account === undefined ? [] : await readers.days(account, periodsStart(now)), now);
    const spent = (micro: number) => cents(micro);
    return answer({
      extra_usage: {
        is_enabled: true,
        monthly_limit: null,
        used_credits: spent(use.month.costMicroUsd),
        utilization: null,
        currency: 'USD',
        daily: { limit: null, used_credits: spent(use.day.costMicroUsd), utilization: null },
        weekly: { limit: null, used_credits: spent(use.week.costMicroUsd), utilization: null },
      },
      limits: [],
    });
  } catch (error) {
    throw new GatewayError('internal', 'Your spend could not be read just now.', { cause: error });
  }
}

/** Whole cents spent (micro-dollars rounded down, as the Claude apps gateway does). */
const cents = (micro: number) => Math.floor(micro / 10_000);
const percent = (cap: BudgetCap) => Math.round(shownUtilization(cap) * 100);

function withCaps(caps: BudgetCap[], active: BudgetCap) {
  return {
    extra_usage: { is_enabled: true, monthly_limit: active.limit / 10_000, used_credits: cents(active.used), utilization: percent(active), currency: 'USD' },
    limits: caps.map((cap) => ({
      kind: 'spend',
      group: PERIOD_NAMES[cap.period],
      percent: percent(cap),
      resets_at: new Date(cap.resetsAt).toISOString(),
      severity: exceeded(cap) || utilization(cap) > 0.95 ? 'critical' : utilization(cap) > 0.75 ? 'warning' : 'normal',
      is_active: cap === active,
    })),
  };
}

function answer(body: unknown): HandlerResponse {
  return { statusCode: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' }, body: JSON.stringify(body) };
}
