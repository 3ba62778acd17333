import type { Usage } from './usage.ts';

/**
 * CloudWatch metrics for one request, as members of the request log line in the Embedded
 * Metric Format (EMF): CloudWatch Logs extracts them from the line itself, so metrics cost no
 * API call and no extra permission. Specification:
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
 *
 * Dimensions are model and upstream, never the key (one metric per key would be unbounded
 * cost); per-key spend comes from the log line through Logs Insights instead. Member names are
 * capitalized so that they never collide with the log line's own camelCase fields.
 */
export const DEFAULT_METRICS_NAMESPACE = 'AgentGateway';

/** Dimension members (the values are strings on the root of the record). */
export const DIMENSIONS = { model: 'Model', upstream: 'Upstream' } as const;

/** Every metric, with its CloudWatch unit. */
export const METRICS = {
  Requests: 'Count',
  /** 4xx answers other than 429 (bad requests, bad keys, unknown models). */
  ClientErrors: 'Count',
  /** 429s: a key's limits or an upstream's rate limit. */
  Throttles: 'Count',
  ServerErrors: 'Count',
  /** A stream that started fine and failed later (upstream cut, idle upstream, deadline). */
  StreamErrors: 'Count',
  Latency: 'Milliseconds',
  TimeToFirstByte: 'Milliseconds',
  InputTokens: 'Count',
  OutputTokens: 'Count',
  CacheReadTokens: 'Count',
  CacheWriteTokens: 'Count',
  /** Spend in micro-dollars (CloudWatch has no currency unit). */
  CostMicroUsd: 'None',
} as const;
export type MetricName = keyof typeof METRICS;

/** Also published without dimensions: the totals that alarms and the dashboard's top row use. */
export const TOTAL_METRICS: readonly MetricName[] = ['Requests', 'ClientErrors', 'Throttles', 'ServerErrors', 'StreamErrors', 'Latency', 'TimeToFirstByte', 'CostMicroUsd'];

/** The dimension value of requests that reached no upstream (bad key, unknown model...). */
export const NO_VALUE = 'none';

const STREAM_FAILURES = new Set(['upstream_failed', 'upstream_truncated', 'upstream_idle', 'deadline']);

export interface RequestMetrics {
  /**
   * The model as priced: the name the upstream was asked for. Pass it only for requests that
   * reached an upstream, so a client cannot mint metrics by sending made-up names.
   */
  model: string | undefined;
  upstream: string | undefined;
  status: number | undefined;
  outcome: string | undefined;
  latencyMs: number;
  ttfbMs: number | undefined;
  usage: Usage | undefined;
  costMicroUsd: number | undefined;
  /** Where the price came from (lambda/usage/prices.ts); `fallback` marks a model without a price. */
  priceSource?: 'config' | 'table' | 'fallback';
}

/**
 * The EMF members for a request: `_aws` plus dimension and metric members, to be merged into
 * the log line's JSON object. Metrics whose value is unknown (no first byte, no usage) are left
 * out of the directives, as the specification requires every referenced member to be present.
 */
export function emfRecord(request: RequestMetrics, options: { namespace?: string; timestamp: number }): Record<string, unknown> {
  const status = request.status ?? 500;
  const values: Partial<Record<MetricName, number>> = {
    Requests: 1,
    ClientErrors: status >= 400 && status < 500 && status !== 429 ? 1 : 0,
    Throttles: status === 429 ? 1 : 0,
    ServerErrors: status >= 500 ? 1 : 0,
    StreamErrors: status < 400 && STREAM_FAILURES.has(request.outcome ?? '') ? 1 : 0,
    Latency: request.latencyMs,
  };
  if (request.ttfbMs !== undefined) values.TimeToFirstByte = request.ttfbMs;
  if (request.usage) {
    values.InputTokens = request.usage.inputTokens;
    values.OutputTokens = request.usage.outputTokens;
    values.CacheReadTokens = request.usage.cacheReadTokens;
    values.CacheWriteTokens = request.usage.cacheWriteTokens;
  }
  if (request.costMicroUsd !== undefined) values.CostMicroUsd = request.costMicroUsd;

  const present = Object.keys(values) as MetricName[];
  const definitions = (names: readonly MetricName[]) => names.filter((name) => name in values).map((name) => ({ Name: name, Unit: METRICS[name] }));
  const namespace = options.namespace ?? DEFAULT_METRICS_NAMESPACE;
  return {
    _aws: {
      Timestamp: Math.round(options.timestamp),
      CloudWatchMetrics: [
        { Namespace: namespace, Dimensions: [[DIMENSIONS.upstream, DIMENSIONS.model]], Metrics: definitions(present) },
        { Namespace: namespace, Dimensions: [[]], Metrics: definitions(TOTAL_METRICS) },
      ],
    },
    [DIMENSIONS.model]: dimensionValue(request.model),
    [DIMENSIONS.upstream]: dimensionValue(request.upstream),
    ...values,
    // Not a metric: lets Logs Insights find requests metered at the fallback price.
    ...(request.priceSource ? { PriceSource: request.priceSource } : {}),
  };
}

/** A dimension value: non-blank printable ASCII of at most 1024 characters (CloudWatch's rules). */
function dimensionValue(value: string | undefined): string {
  return value === undefined || value.trim() === '' ? NO_VALUE : value.replace(/[^\x20-\x7e]/g, '?').slice(0, 1024);
}
