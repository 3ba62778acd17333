import { estimateTokens } from '../formats/token-estimate.ts';
import type { Usage } from '../observability/usage.ts';
import type { RequestState } from '../request-state.ts';
import { costMicroUsd } from './cost.ts';
import { SERVER_TOOL_MICRO_USD, tierMultiplier, UNKNOWN_SERVER_TOOL_MICRO_USD, US_ONLY_INFERENCE_MULTIPLIER } from './premium-prices.ts';
import type { PriceBook, PriceMatch } from './prices.ts';

/**
 * How a response ends when the client did not get it whole: the client left, stopped reading
 * or the server stopped (the runtime abandoned it), the deadline came, the upstream broke off,
 * or the gateway itself failed mid-stream. The upstream worked (and bills) until then.
 */
const CUT_SHORT: ReadonlySet<string> = new Set(['client_closed', 'client_stalled', 'shutdown', 'deadline', 'upstream_failed', 'upstream_truncated', 'upstream_idle', 'internal_error']);

/** Routes that run a model upstream (and cost tokens); probes, lists and counts do not. */
const MODEL_ROUTES: ReadonlySet<string | undefined> = new Set(['messages', 'responses', 'responses_compact']);

/** Routes that reach an upstream on a key's behalf: the model routes and the token counts. Key limits apply to all of them. */
const UPSTREAM_ROUTES: ReadonlySet<string | undefined> = new Set([...MODEL_ROUTES, 'count_tokens', 'responses_input_tokens']);

/** Requests that reach an upstream on behalf of a key or a person (signed in, or a key's owner) are metered. */
export function isMetered(state: RequestState): boolean {
  return (state.key !== undefined || state.principal?.person !== undefined) && state.upstream !== undefined && MODEL_ROUTES.has(state.route?.name);
}

/**
 * The account a request acts for first: its key, else the signed-in person (`person#<sub>`,
 * docs/sign-in.md); undefined for requests that act for nobody. (Usage is charged to every
 * account of the request, the key's and its person's: UsageRecorder, accountsOf.)
 */
export function accountOf(state: RequestState): string | undefined {
  if (state.key) return state.key.id;
  const sub = state.principal?.kind === 'session' ? state.principal.person?.sub : undefined;
  return sub === undefined ? undefined : `person#${sub}`;
}

/** The routes that cost tokens: budgets are charged by them, and their output ceiling is clamped. */
export function runsModel(state: Pick<RequestState, 'route'>): boolean {
  return MODEL_ROUTES.has(state.route?.name);
}

/** The routes key limits apply to (requests per minute, spent budgets): every one that reaches an upstream. */
export function reachesUpstream(state: Pick<RequestState, 'route'>): boolean {
  return UPSTREAM_ROUTES.has(state.route?.name);
}

/**
 * The usage to charge. The upstream's final usage is charged as it is. Without it, a response
 * that was answered (any 2xx) or cut short is charged an estimate of what it cost, whatever
 * ended it: the counts the upstream did report are kept, input the upstream never reported is
 * estimated from the request, output from the content relayed (4 bytes per token), and the
 * result is marked `estimated`. Never zero for a success: a 200 without usage (an upstream that
 * does not report it) is charged its input at least. An upstream's own error answer costs
 * nothing, and neither does an in-stream error that came before anything was generated.
 */
export function chargeableUsage(state: RequestState): { usage: Usage | undefined; estimated: boolean } {
  if (state.usageFinal) return { usage: state.usage, estimated: false };
  const answered = state.status !== undefined && state.status >= 200 && state.status < 300;
  if (!answered && !CUT_SHORT.has(state.outcome ?? '')) return { usage: state.usage, estimated: false };
  const output = Math.ceil((state.outputBytes ?? 0) / 4);
  const known = state.usage;
  if (state.outcome === 'upstream_error' && known === undefined && output === 0) return { usage: undefined, estimated: false };
  const usage: Usage = {
    ...known,
    inputTokens: known?.inputTokens || known?.cacheReadTokens || known?.cacheWriteTokens ? known.inputTokens : estimateTokens([state.rawBody]),
    outputTokens: Math.max(known?.outputTokens ?? 0, output),
    cacheReadTokens: known?.cacheReadTokens ?? 0,
    cacheWriteTokens: known?.cacheWriteTokens ?? 0,
  };
  return { usage, estimated: true };
}

/**
 * What a request's usage costs, in micro-dollars: its tokens at its model's price (the model
 * the upstream was asked for, else the client's; never free), times the multiplier of the
 * premium tier that served it and US-only inference's, plus its server-tool calls at their
 * per-call price (lambda/usage/premium-prices.ts).
 */
export function requestCost(usage: Usage | undefined, state: Pick<RequestState, 'upstreamModel' | 'model' | 'body'>, prices: PriceBook): { costMicroUsd: number; source: PriceMatch['source'] } {
  const match = prices.lookup(state.upstreamModel, state.model);
  if (!usage) return { costMicroUsd: 0, source: match.source };
  let multiplier = 1;
  if (usage.serviceTier) multiplier *= match.price.multipliers?.[usage.serviceTier] ?? tierMultiplier(usage.serviceTier, [state.upstreamModel, state.model].filter((model): model is string => model !== undefined));
  if (usage.inferenceGeo === 'us') multiplier *= US_ONLY_INFERENCE_MULTIPLIER;
  // OpenAI's older web_search_preview tool costs more per call on non-reasoning models: charged at that price when the request declared it.
  const tools = Array.isArray(state.body?.tools) ? (state.body.tools as unknown[]) : [];
  const preview = tools.some((tool) => typeof (tool as { type?: unknown })?.type === 'string' && (tool as { type: string }).type.startsWith('web_search_preview'));
  let perCallMicroUsd = 0;
  for (const [tool, calls] of Object.entries(usage.serverToolCalls ?? {})) {
    perCallMicroUsd += calls * (SERVER_TOOL_MICRO_USD[tool === 'web_search' && preview ? 'web_search_preview' : tool] ?? UNKNOWN_SERVER_TOOL_MICRO_USD);
  }
  return { costMicroUsd: costMicroUsd(usage, match.price, { multiplier, perCallMicroUsd }), source: match.source };
}
