import { estimateTokens } from '../formats/token-estimate.ts';
import type { Usage } from '../observability/usage.ts';
import type { RequestState } from '../request-state.ts';

/** Outcomes of streams that ended before the upstream's final usage arrived. */
const CUT_SHORT = new Set(['client_closed', 'upstream_failed', 'upstream_truncated', 'upstream_idle', 'deadline']);

/** Routes that run a model upstream (and cost tokens); probes, lists and counts do not. */
const MODEL_ROUTES: ReadonlySet<string | undefined> = new Set(['messages', 'responses', 'responses_compact']);

/** Requests that reach an upstream on behalf of a key or a person are metered. */
export function isMetered(state: RequestState): boolean {
  return (state.key !== undefined || state.principal?.person !== undefined) && state.upstream !== undefined && MODEL_ROUTES.has(state.route?.name);
}

/** The routes key limits apply to: the ones that cost tokens. */
export function runsModel(state: RequestState): boolean {
  return MODEL_ROUTES.has(state.route?.name);
}

/**
 * The usage to charge. A stream cut short still cost what was delivered: known counts are kept,
 * and what the upstream never reported is estimated (input from the request, output from the
 * content relayed, 4 bytes per token), marked `estimated`.
 */
export function chargeableUsage(state: RequestState): { usage: Usage | undefined; estimated: boolean } {
  if (!CUT_SHORT.has(state.outcome ?? '')) return { usage: state.usage, estimated: false };
  const output = Math.ceil((state.outputBytes ?? 0) / 4);
  const known = state.usage;
  const usage: Usage = {
    inputTokens: known?.inputTokens || known?.cacheReadTokens || known?.cacheWriteTokens ? known.inputTokens : estimateTokens([state.rawBody]),
    outputTokens: Math.max(known?.outputTokens ?? 0, output),
    cacheReadTokens: known?.cacheReadTokens ?? 0,
    cacheWriteTokens: known?.cacheWriteTokens ?? 0,
    ...(known?.cacheWrite1hTokens ? { cacheWrite1hTokens: known.cacheWrite1hTokens } : {}),
  };
  return { usage, estimated: true };
}
