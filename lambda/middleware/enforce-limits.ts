import type { KeyLimits } from '../auth/key-table.ts';
import type { GatewayDeps } from '../deps.ts';
import { GatewayError } from '../errors.ts';
import { setTopLevelNumber } from '../formats/json-fields.ts';
import { stateOf, type RequestState } from '../request-state.ts';
import { bindingCap, capHeaders } from '../usage/budget-headers.ts';
import { hasBudget, secondsUntilNextMinute } from '../usage/limits.ts';
import { reachesUpstream, runsModel } from '../usage/metering.ts';
import { spendRefusal, spendUnreadable } from '../usage/spend-refusal.ts';
import { blockingCap, hasSpendLimits, readSpendStanding, type SpendSubject } from '../usage/spend-standing.ts';
import { personAccount } from '../usage/usage-table.ts';
import type { GatewayMiddleware } from './types.ts';

/**
 * Applies the caller's limits before anything goes upstream: spend (the key's dollar and token
 * budgets, the person's caps per day, week and month, their groups' pools: one read of each
 * counter, usage/spend-standing.ts), then requests in flight (a lease on one of the key's, and
 * the person's, slots, taken while the spend is read), then requests per minute (an atomic
 * conditional counter, so the limit holds across every instance), then the output-token
 * ceiling, which clamps the request rather than refusing it. The token counts (`count_tokens`,
 * `input_tokens`) reach the upstream too: they count against requests per minute and are
 * refused once a limit is spent; they hold no slot and have no output to clamp. Refusals are
 * 429s with `retry-after`, in the client's format (usage/spend-refusal.ts); a counter that cannot
 * be read refuses too (fail closed). Every answer to a caller with limits says how much of the
 * binding one is used, in the headers Claude Code reads (usage/budget-headers.ts).
 */
export function enforceLimits(deps: GatewayDeps): GatewayMiddleware {
  return {
    async before(request) {
      const state = stateOf(request.context);
      const key = state.key;
      const person = state.policy ? state.principal?.person : undefined;
      if ((!key && !person) || !reachesUpstream(state)) return;
      const limits = key?.limits ?? {};
      const subject: SpendSubject = { ...(key ? { key } : {}), ...(person && state.policy ? { person, policy: state.policy } : {}) };
      const now = new Date();
      const metered = deps.usage !== undefined && hasSpendLimits(subject);
      const slots = deps.usage && runsModel(state) ? takeSlots(state, deps, subject, now) : undefined;
      // Awaited below; a failure while the spend is being read is not an unhandled rejection.
      slots?.catch(() => undefined);
      try {
        if (metered) await refuseSpent(state, deps, subject, now);
      } catch (error) {
        // Slots taken meanwhile are registered for release before the refusal goes out.
        await slots?.catch(() => undefined);
        throw error;
      }
      let refused;
      try {
        refused = await slots;
      } catch (error) {
        // The leases live beside the spend counters: one that cannot be taken fails closed the same way.
        delete state.answerHeaders;
        throw spendUnreadable(state.family, error);
      }
      if (refused) {
        throw new GatewayError('rate_limit', `${refused.who} already has ${refused.cap} requests in progress, the most it may have at once; retry when one has finished.`, {
          headers: { 'retry-after': String(IN_FLIGHT_RETRY_SECONDS) },
        });
      }
      if (key && deps.usage && limits.requestsPerMinute !== undefined && !(await deps.usage.admitRequest(key.id, limits.requestsPerMinute, now))) {
        throw new GatewayError('rate_limit', `This API key is limited to ${limits.requestsPerMinute} requests per minute.`, {
          headers: { 'retry-after': String(secondsUntilNextMinute(now)) },
        });
      }
      if (limits.maxOutputTokens !== undefined && runsModel(state) && state.route?.name !== 'responses_compact') capOutputTokens(state, limits.maxOutputTokens);
    },
  };
}

/** Reads where the caller stands, sets the headers, and refuses a request whose limit is spent. */
async function refuseSpent(state: RequestState, deps: GatewayDeps, subject: SpendSubject, now: Date): Promise<void> {
  const usage = deps.usage as NonNullable<GatewayDeps['usage']>;
  let standing;
  try {
    standing = await readSpendStanding(subject, { days: (account, from) => usage.days(account, from), ...(deps.poolSpend ? { pools: deps.poolSpend } : {}) }, now);
  } catch (error) {
    delete state.answerHeaders;
    throw spendUnreadable(state.family, error);
  }
  const blocking = blockingCap(standing);
  // The client is told about its own limits; a pool is named only once it is what refuses.
  state.answerHeaders = capHeaders(blocking ?? bindingCap(standing.caps), now);
  if (blocking) throw spendRefusal(blocking, now, state.policy?.blockedMessage);
}

/** A request in flight is waited on, not counted per minute: a second is about when the next slot is likely free. */
const IN_FLIGHT_RETRY_SECONDS = 1;
/** A lease outlives its request's deadline by this much: the usage write and the release come after it. */
const LEASE_SLACK_MS = 30_000;

/** The key's cap on requests in flight: its own, else the gateway's default when it has a budget (none without: nothing to overshoot). */
function keyInFlightCap(limits: KeyLimits, deps: GatewayDeps, budgeted: boolean): number | undefined {
  const cap = limits.maxInFlight ?? (budgeted ? deps.settings.maxInFlightPerKey : 0);
  return cap > 0 ? cap : undefined;
}

/**
 * Takes one of the key's slots for requests in flight (when it has a cap) and one of the
 * person's (when they have caps or pools: the gateway's default per key applies to a person
 * too), so that concurrent requests overshoot a limit by a bounded amount. Resolves to the one
 * refused, if any; taken slots are given back once the request's usage is recorded (gateway.ts),
 * or at their expiry if the instance dies first.
 */
async function takeSlots(state: RequestState, deps: GatewayDeps, subject: SpendSubject, now: Date): Promise<{ who: string; cap: number } | undefined> {
  const usage = deps.usage as NonNullable<GatewayDeps['usage']>;
  const expiresAt = new Date(state.deadline + LEASE_SLACK_MS);
  const wanted: { account: string; cap: number; who: string }[] = [];
  const keyCap = subject.key ? keyInFlightCap(subject.key.limits ?? {}, deps, hasBudget(subject.key.limits)) : undefined;
  if (subject.key && keyCap !== undefined) wanted.push({ account: subject.key.id, cap: keyCap, who: 'This API key' });
  const personLimited = subject.person !== undefined && hasSpendLimits({ person: subject.person, ...(subject.policy ? { policy: subject.policy } : {}) });
  if (subject.person && personLimited && deps.settings.maxInFlightPerKey > 0) wanted.push({ account: personAccount(subject.person.sub), cap: deps.settings.maxInFlightPerKey, who: 'Your account' });
  const releases: (() => Promise<void>)[] = [];
  state.releaseLease = async () => {
    await Promise.all(releases.map((release) => release()));
  };
  for (const slot of wanted) {
    if (!(await usage.acquireLease(slot.account, state.id, slot.cap, expiresAt, now))) return { who: slot.who, cap: slot.cap };
    releases.push(() => usage.releaseLease(slot.account, state.id, expiresAt));
  }
  return undefined;
}

function capOutputTokens(state: RequestState, cap: number): void {
  const field = state.family === 'messages' ? 'max_tokens' : 'max_output_tokens';
  const asked = state.body?.[field];
  if (typeof asked === 'number' && asked <= cap) return;
  state.body = { ...state.body, [field]: cap };
  state.rawBody = setTopLevelNumber(state.rawBody as string, field, cap);
  state.cappedOutputTokens = cap;
}
