import type { RequestState } from '../request-state.ts';
import { emfRecord } from './metrics.ts';

/**
 * The one log line per request. It carries ids, routing, timings and token counts, and never a
 * prompt, a reply, a key or a credential: keys are named by their public id only.
 */
export function requestLogLine(state: RequestState, metricsNamespace?: string): string {
  const respondedAt = state.respondedAt ?? Date.now();
  const line = {
    // Lambda reads `timestamp` and `level` from JSON lines written to stdout (log-level filtering).
    timestamp: new Date(respondedAt).toISOString(),
    level: (state.status ?? 500) >= 500 ? 'error' : 'info',
    msg: 'request',
    requestId: state.id,
    method: state.method,
    path: state.path,
    keyId: state.key?.id,
    // The person (IdP subject) a signed-in session or a key tied to a person acts for.
    sub: state.principal?.person?.sub,
    route: state.route?.name,
    model: state.model,
    upstream: state.upstream,
    upstreamModel: state.upstreamModel === state.model ? undefined : state.upstreamModel,
    status: state.status,
    outcome: state.outcome ?? 'ok',
    // The client's latency: until the response was handed over, not until usage was written.
    latencyMs: respondedAt - state.startedAt,
    ttfbMs: state.firstByteAt === undefined ? undefined : state.firstByteAt - state.startedAt,
    usage: state.usage,
    usageEstimated: state.usageEstimated,
    usageWriteMs: state.usageWriteMs,
    usageRecordFailed: state.usageRecordFailed,
    dropped: state.dropped,
    cappedOutputTokens: state.cappedOutputTokens,
    // Every target tried, when a route tried more than one (fallbacks, another key), or when
    // the one try rested a key (which one, by position, and for how long).
    attempts: state.attempts.length > 1 || state.attempts.some((attempt) => attempt.keyRestedMs !== undefined) ? state.attempts : undefined,
    costUsd: state.costMicroUsd === undefined ? undefined : state.costMicroUsd / 1e6,
    // `fallback`: the model has no known price and was charged the fallback rate (set `prices`).
    priceSource: state.priceSource === 'table' ? undefined : state.priceSource,
    cause: state.cause,
  };
  if (metricsNamespace === undefined) return JSON.stringify(line);
  // On Lambda the same line is a CloudWatch Embedded Metric Format record: metrics without an API call.
  const metrics = emfRecord(
    {
      model: modelDimension(state),
      upstream: state.upstream,
      status: state.status,
      outcome: line.outcome,
      latencyMs: line.latencyMs,
      ttfbMs: line.ttfbMs,
      usage: state.usage,
      costMicroUsd: state.costMicroUsd,
      ...(state.priceSource ? { priceSource: state.priceSource } : {}),
    },
    { namespace: metricsNamespace, timestamp: respondedAt },
  );
  return JSON.stringify({ ...line, ...metrics });
}

/**
 * The Model dimension, whose values must stay few: a key holder must not mint custom metrics by
 * sending made-up names down a glob route. So the concrete name only when the routing config
 * names it (a target's upstreamModel, a route without a glob) or an upstream accepted it (a
 * success: it serves that model); otherwise the route's glob. A name an upstream refused, or
 * never saw (unreachable, timed out, the client gone first), and any the simulator answered go
 * under the glob. A server that answers every name with a success (some OpenAI-compatible ones
 * do) is taken at its word: give its routes an upstreamModel.
 */
function modelDimension(state: RequestState): string | undefined {
  if (state.upstream === undefined) return undefined;
  return state.modelAccepted ? (state.upstreamModel ?? state.model) : state.routedModel;
}
