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
    keyId: state.key?.id,
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
      // Only names an upstream was asked for and did not refuse become dimensions: a glob route
      // passes any name on, and a made-up one is answered 4xx, so clients cannot mint metrics.
      model: state.upstream === undefined || refusedByUpstream(state.status) ? undefined : (state.upstreamModel ?? state.model),
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

/** A 4xx other than a rate limit: the request itself (its model name, say) was refused. */
function refusedByUpstream(status: number | undefined): boolean {
  return status !== undefined && status >= 400 && status < 500 && status !== 429;
}
