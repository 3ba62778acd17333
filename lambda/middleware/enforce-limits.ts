import type { GatewayDeps } from '../deps.ts';
import { GatewayError } from '../errors.ts';
import { setTopLevelNumber } from '../formats/json-fields.ts';
import { stateOf } from '../request-state.ts';
import { budgetHeaders } from '../usage/budget-headers.ts';
import { formatUsdShort } from '../usage/cost.ts';
import { exhaustedBudget, exhaustedSpend, hasBudget, monthStart, secondsUntilNextMinute } from '../usage/limits.ts';
import { runsModel } from '../usage/metering.ts';
import type { GatewayMiddleware } from './types.ts';

/**
 * Applies the caller's key limits before anything goes upstream: dollar budgets, then token
 * budgets (day, month; one read of the key's month), then requests per minute (an atomic
 * conditional counter, so the limit holds across every instance), then the output-token ceiling,
 * which clamps the request rather than refusing it. Refusals are 429s with `retry-after`, in the
 * client's format: a spent dollar budget is `billing_error` / `insufficient_quota` and not to be
 * retried before its period ends. Every answer to a budgeted key says how much of its budget is
 * used, in the headers Claude Code reads (usage/budget-headers.ts).
 */
export function enforceLimits(deps: GatewayDeps): GatewayMiddleware {
  return {
    async before(request) {
      const state = stateOf(request.context);
      const limits = state.key?.limits;
      if (!limits || !state.key || !runsModel(state)) return;
      const now = new Date();
      if (deps.usage && hasBudget(limits)) {
        const days = await deps.usage.days(state.key.id, monthStart(now));
        state.answerHeaders = budgetHeaders(limits, days, now);
        const spent = exhaustedSpend(limits, days, now);
        if (spent) {
          throw new GatewayError('budget_exhausted', `This API key has spent its ${formatUsdShort(spent.limitMicroUsd)} budget for the ${spent.period}; it resets at ${spent.resetsAt.toISOString()}.`, {
            headers: { 'retry-after': String(spent.retryAfterSeconds) },
            code: 'insufficient_quota',
          });
        }
        const exhausted = exhaustedBudget(limits, days, now);
        if (exhausted) {
          throw new GatewayError('rate_limit', `This API key has used its ${exhausted.limit} tokens for the ${exhausted.period}.`, {
            headers: { 'retry-after': String(exhausted.retryAfterSeconds) },
            code: 'token_budget_exceeded',
          });
        }
      }
      if (deps.usage && limits.requestsPerMinute !== undefined && !(await deps.usage.admitRequest(state.key.id, limits.requestsPerMinute, now))) {
        throw new GatewayError('rate_limit', `This API key is limited to ${limits.requestsPerMinute} requests per minute.`, {
          headers: { 'retry-after': String(secondsUntilNextMinute(now)) },
        });
      }
      if (limits.maxOutputTokens !== undefined && state.route?.name !== 'responses_compact') capOutputTokens(state, limits.maxOutputTokens);
    },
  };
}

function capOutputTokens(state: ReturnType<typeof stateOf>, cap: number): void {
  const field = state.family === 'messages' ? 'max_tokens' : 'max_output_tokens';
  const asked = state.body?.[field];
  if (typeof asked === 'number' && asked <= cap) return;
  state.body = { ...state.body, [field]: cap };
  state.rawBody = setTopLevelNumber(state.rawBody as string, field, cap);
  state.cappedOutputTokens = cap;
}
