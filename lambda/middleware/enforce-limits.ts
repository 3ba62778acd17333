import type { KeyLimits, KeyRecord } from '../auth/key-table.ts';
import type { GatewayDeps } from '../deps.ts';
import { GatewayError } from '../errors.ts';
import { setTopLevelNumber } from '../formats/json-fields.ts';
import { stateOf } from '../request-state.ts';
import { budgetHeaders } from '../usage/budget-headers.ts';
import { formatUsdShort } from '../usage/cost.ts';
import { exhaustedBudget, exhaustedSpend, hasBudget, monthStart, secondsUntilNextMinute } from '../usage/limits.ts';
import { reachesUpstream, runsModel } from '../usage/metering.ts';
import type { GatewayMiddleware } from './types.ts';

/**
 * Applies the caller's key limits before anything goes upstream: dollar budgets, then token
 * budgets (day, month; one read of the key's month), then requests in flight (a lease on one of
 * the key's slots, taken while the budget is read), then requests per minute (an atomic
 * conditional counter, so the limit holds across every instance), then the output-token
 * ceiling, which clamps the request rather than refusing it. The token counts (`count_tokens`,
 * `input_tokens`) reach the upstream too: they count against requests per minute and are
 * refused once a budget is spent; they hold no slot and have no output to clamp. Refusals are
 * 429s with `retry-after`, in the client's format: a spent dollar budget is `billing_error` /
 * `insufficient_quota` and not to be retried before its period ends. Every answer to a budgeted
 * key says how much of its budget is used, in the headers Claude Code reads
 * (usage/budget-headers.ts).
 */
export function enforceLimits(deps: GatewayDeps): GatewayMiddleware {
  return {
    async before(request) {
      const state = stateOf(request.context);
      const key = state.key;
      if (!key || !reachesUpstream(state)) return;
      const limits = key.limits ?? {};
      const now = new Date();
      const slot = deps.usage && runsModel(state) ? takeSlot(state, deps, limits, now) : undefined;
      try {
        if (deps.usage && hasBudget(limits)) await refuseSpentBudgets(state, deps, limits, now);
      } catch (error) {
        // A slot taken meanwhile is registered for release before the refusal goes out.
        await slot?.catch(() => false);
        throw error;
      }
      if (slot !== undefined && !(await slot)) {
        throw new GatewayError('rate_limit', `This API key already has ${inFlightCap(limits, deps) as number} requests in progress, the most it may have at once; retry when one has finished.`, {
          headers: { 'retry-after': String(IN_FLIGHT_RETRY_SECONDS) },
        });
      }
      if (deps.usage && limits.requestsPerMinute !== undefined && !(await deps.usage.admitRequest(key.id, limits.requestsPerMinute, now))) {
        throw new GatewayError('rate_limit', `This API key is limited to ${limits.requestsPerMinute} requests per minute.`, {
          headers: { 'retry-after': String(secondsUntilNextMinute(now)) },
        });
      }
      if (limits.maxOutputTokens !== undefined && runsModel(state) && state.route?.name !== 'responses_compact') capOutputTokens(state, limits.maxOutputTokens);
    },
  };
}

async function refuseSpentBudgets(state: ReturnType<typeof stateOf>, deps: GatewayDeps, limits: KeyLimits, now: Date): Promise<void> {
  const days = await (deps.usage as NonNullable<GatewayDeps['usage']>).days((state.key as KeyRecord).id, monthStart(now));
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

/** A request in flight is waited on, not counted per minute: a second is about when the next slot is likely free. */
const IN_FLIGHT_RETRY_SECONDS = 1;
/** A lease outlives its request's deadline by this much: the usage write and the release come after it. */
const LEASE_SLACK_MS = 30_000;

/** The key's cap on requests in flight: its own, else the gateway's default when it has a budget (none without: nothing to overshoot). */
function inFlightCap(limits: KeyLimits, deps: GatewayDeps): number | undefined {
  const cap = limits.maxInFlight ?? (hasBudget(limits) ? deps.settings.maxInFlightPerKey : 0);
  return cap > 0 ? cap : undefined;
}

/**
 * Takes one of the key's slots for requests in flight, when it has a cap (true: taken, or no
 * cap). A taken slot is given back once the request's usage is recorded (gateway.ts), or at its
 * expiry if the instance dies first.
 */
async function takeSlot(state: ReturnType<typeof stateOf>, deps: GatewayDeps, limits: KeyLimits, now: Date): Promise<boolean> {
  const cap = inFlightCap(limits, deps);
  if (cap === undefined) return true;
  const usage = deps.usage as NonNullable<GatewayDeps['usage']>;
  const keyId = (state.key as KeyRecord).id;
  const expiresAt = new Date(state.deadline + LEASE_SLACK_MS);
  if (!(await usage.acquireLease(keyId, state.id, cap, expiresAt, now))) return false;
  state.releaseLease = () => usage.releaseLease(keyId, state.id, expiresAt);
  return true;
}

function capOutputTokens(state: ReturnType<typeof stateOf>, cap: number): void {
  const field = state.family === 'messages' ? 'max_tokens' : 'max_output_tokens';
  const asked = state.body?.[field];
  if (typeof asked === 'number' && asked <= cap) return;
  state.body = { ...state.body, [field]: cap };
  state.rawBody = setTopLevelNumber(state.rawBody as string, field, cap);
  state.cappedOutputTokens = cap;
}
