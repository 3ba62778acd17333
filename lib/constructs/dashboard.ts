import { Duration, Stack } from 'aws-cdk-lib';
import {
  Dashboard,
  GraphWidget,
  LogQueryVisualizationType,
  LogQueryWidget,
  MathExpression,
  Metric,
  SingleValueWidget,
  TextWidget,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { DIMENSIONS, type MetricName } from '../../lambda/observability/metrics.ts';
import { logQuery } from './log-queries.ts';

export interface GatewayDashboardProps {
  /** The EMF namespace the function publishes to (lambda/observability/metrics.ts). */
  namespace: string;
  function: IFunction;
  logGroup: ILogGroup;
  dashboardName: string;
}

const PERIOD = Duration.minutes(5);

/**
 * One CloudWatch dashboard for the gateway: traffic and errors, latency and time to first byte,
 * spend, then the same per model (requests, first byte, errors by class, tokens, spend) (SEARCH over the Upstream/Model dimensions, so new models
 * appear without a deploy), the function's own health, and the top keys by spend from the logs.
 */
export class GatewayDashboard extends Construct {
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: GatewayDashboardProps) {
    super(scope, id);
    const { namespace } = props;
    const total = (name: MetricName, statistic: string, label?: string): Metric =>
      new Metric({ namespace, metricName: name, statistic, period: PERIOD, label: label ?? `${name} ${statistic}` });
    const usd = (micro: IMetric, label: string) => new MathExpression({ expression: 'micro / 1000000', usingMetrics: { micro }, label, period: PERIOD });
    // Series per Upstream/Model found at view time; labels are the dimension values.
    const perModel = (name: MetricName, statistic: string) =>
      new MathExpression({ expression: `SEARCH('{"${namespace}",${DIMENSIONS.upstream},${DIMENSIONS.model}} MetricName="${name}"', '${statistic}', ${PERIOD.toSeconds()})`, usingMetrics: {}, period: PERIOD });

    this.dashboard = new Dashboard(this, 'Dashboard', { dashboardName: props.dashboardName, defaultInterval: Duration.days(1) });
    this.dashboard.addWidgets(
      new TextWidget({
        markdown: `# Agent gateway\nMetrics from the request log line (namespace \`${namespace}\`); spend is list price from the gateway's price table, a circuit breaker rather than an invoice.`,
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Requests and errors',
        left: [total('Requests', 'Sum', 'requests'), total('ServerErrors', 'Sum', '5xx'), total('Throttles', 'Sum', '429'), total('ClientErrors', 'Sum', 'other 4xx'), total('StreamErrors', 'Sum', 'failed mid-stream')],
        width: 8,
      }),
      new GraphWidget({
        title: 'Latency and time to first byte (ms)',
        left: [total('TimeToFirstByte', 'p50', 'first byte p50'), total('TimeToFirstByte', 'p99', 'first byte p99'), total('Latency', 'p50', 'latency p50'), total('Latency', 'p99', 'latency p99')],
        width: 8,
      }),
      new SingleValueWidget({ title: 'Spend in the time range (USD)', metrics: [usd(total('CostMicroUsd', 'Sum'), 'USD')], setPeriodToTimeRange: true, width: 4 }),
      new GraphWidget({ title: 'Spend (USD per 5 minutes)', left: [usd(total('CostMicroUsd', 'Sum'), 'USD')], width: 4 }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({ title: 'Requests per model', left: [perModel('Requests', 'Sum')], width: 8 }),
      new GraphWidget({ title: 'Time to first byte p50 per model (ms)', left: [perModel('TimeToFirstByte', 'p50')], width: 8 }),
      new GraphWidget({ title: 'Time to first byte p99 per model (ms)', left: [perModel('TimeToFirstByte', 'p99')], width: 8 }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({ title: '5xx per model', left: [perModel('ServerErrors', 'Sum')], width: 8 }),
      new GraphWidget({ title: '429 per model', left: [perModel('Throttles', 'Sum')], width: 8 }),
      new GraphWidget({ title: 'Failed mid-stream per model', left: [perModel('StreamErrors', 'Sum')], width: 8 }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Spend per model (USD per 5 minutes)',
        left: [new MathExpression({ expression: 'micro / 1000000', usingMetrics: { micro: perModel('CostMicroUsd', 'Sum') }, period: PERIOD })],
        width: 8,
      }),
      new GraphWidget({ title: 'Output tokens per model', left: [perModel('OutputTokens', 'Sum')], width: 8 }),
      new GraphWidget({ title: 'Input tokens per model (uncached)', left: [perModel('InputTokens', 'Sum')], width: 8 }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({ title: 'Cache read tokens per model', left: [perModel('CacheReadTokens', 'Sum')], width: 8 }),
      new GraphWidget({ title: 'Cache write tokens per model', left: [perModel('CacheWriteTokens', 'Sum')], width: 8 }),
      new GraphWidget({
        title: 'Function: invocations, throttles, concurrency',
        left: [props.function.metricInvocations({ period: PERIOD }), props.function.metricThrottles({ period: PERIOD }), props.function.metricErrors({ period: PERIOD })],
        right: [new Metric({ namespace: 'AWS/Lambda', metricName: 'ConcurrentExecutions', dimensionsMap: { FunctionName: props.function.functionName }, statistic: 'Maximum', period: PERIOD })],
        width: 8,
      }),
    );
    const region = Stack.of(this).region;
    this.dashboard.addWidgets(
      new LogQueryWidget({ title: 'Top keys by spend', logGroupNames: [props.logGroup.logGroupName], queryString: logQuery('top-keys-by-spend'), view: LogQueryVisualizationType.TABLE, region, width: 12, height: 8 }),
      new LogQueryWidget({ title: 'Models metered at the fallback price (add them to "prices")', logGroupNames: [props.logGroup.logGroupName], queryString: logQuery('unpriced-models'), view: LogQueryVisualizationType.TABLE, region, width: 12, height: 8 }),
    );
  }
}
