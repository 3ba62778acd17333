import { STACK_OUTPUTS } from '../../../lib/output-names.ts';
import { logQuery } from '../../../lib/constructs/log-queries.ts';
import { onlyResource, synthGateway } from '../synth.ts';

/** The dashboard body is a JSON string with tokens joined in: rebuild it with placeholders. */
function dashboardBody(template: ReturnType<typeof synthGateway>['template']): any {
  const body = onlyResource(template, 'AWS::CloudWatch::Dashboard').properties.DashboardBody;
  const parts: unknown[] = body['Fn::Join'][1];
  return JSON.parse(parts.map((part) => (typeof part === 'string' ? part : 'TOKEN')).join(''));
}

describe('CloudWatch dashboard', () => {
  const { template, config } = synthGateway({ stackName: 'TeamGateway' });
  const body = dashboardBody(template);
  const widgets: any[] = body.widgets;
  const titled = (title: string) => widgets.find((widget) => widget.properties.title === title);
  const expressions = (widget: any): string[] => widget.properties.metrics.flatMap((row: any[]) => row.filter((item) => typeof item === 'object' && item.expression).map((item) => item.expression));
  const metricNames = (widget: any): string[] => widget.properties.metrics.filter((row: any[]) => typeof row[0] === 'string').map((row: any[]) => row[1]);

  test('is named after the stack and linked from an output', () => {
    expect(onlyResource(template, 'AWS::CloudWatch::Dashboard').properties.DashboardName).toBe('TeamGateway');
    const outputs = template.toJSON().Outputs;
    expect(JSON.stringify(outputs[STACK_OUTPUTS.dashboardUrl].Value)).toContain('#dashboards/dashboard/TeamGateway');
  });

  test('shows traffic, errors by class and latency from the namespace the function publishes to', () => {
    const traffic = titled('Requests and errors');
    expect(traffic.properties.metrics.map((row: any[]) => row.slice(0, 2))).toEqual(['Requests', 'ServerErrors', 'Throttles', 'ClientErrors', 'StreamErrors'].map((name) => ['TeamGateway', name]));
    const latency = titled('Latency and time to first byte (ms)');
    expect(latency.properties.metrics.map((row: any[]) => [row[1], row.at(-1).stat])).toEqual([['TimeToFirstByte', 'p50'], ['TimeToFirstByte', 'p99'], ['Latency', 'p50'], ['Latency', 'p99']]);
    const variables: Record<string, unknown> = onlyResource(template, 'AWS::Lambda::Function', 'Gateway').properties.Environment.Variables;
    expect(variables.GATEWAY_METRICS_NAMESPACE).toBe(config.stackName);
  });

  test('breaks requests, first byte p50/p99, errors by class, tokens and spend down per model with SEARCH on the EMF dimensions', () => {
    expect(expressions(titled('Requests per model'))).toEqual([`SEARCH('{"TeamGateway",Upstream,Model} MetricName="Requests"', 'Sum', 300)`]);
    expect(expressions(titled('Time to first byte p50 per model (ms)'))[0]).toContain(`MetricName="TimeToFirstByte"', 'p50'`);
    expect(expressions(titled('Time to first byte p99 per model (ms)'))[0]).toContain(`'p99'`);
    for (const [title, metric] of [['Output tokens per model', 'OutputTokens'], ['Input tokens per model (uncached)', 'InputTokens'], ['Cache read tokens per model', 'CacheReadTokens'], ['Cache write tokens per model', 'CacheWriteTokens']]) {
      expect(expressions(titled(title as string))[0]).toContain(`MetricName="${metric}"`);
    }
    expect(expressions(titled('Spend per model (USD per 5 minutes)')).sort()).toEqual(['micro / 1000000', `SEARCH('{"TeamGateway",Upstream,Model} MetricName="CostMicroUsd"', 'Sum', 300)`].sort());
    for (const [title, metric] of [['5xx per model', 'ServerErrors'], ['429 per model', 'Throttles'], ['Failed mid-stream per model', 'StreamErrors']]) {
      expect(expressions(titled(title as string))).toEqual([`SEARCH('{"TeamGateway",Upstream,Model} MetricName="${metric}"', 'Sum', 300)`]);
    }
    expect(expressions(titled('Spend in the time range (USD)'))).toEqual(['micro / 1000000']);
    expect(metricNames(titled('Spend in the time range (USD)'))).toEqual(['CostMicroUsd']);
  });

  test("shows the function's throttles and the top keys by spend from the logs", () => {
    expect(metricNames(titled('Function: invocations, throttles, concurrency'))).toEqual(['Invocations', 'Throttles', 'Errors', 'ConcurrentExecutions']);
    const topKeys = titled('Top keys by spend');
    expect(topKeys.type).toBe('log');
    expect(topKeys.properties.query).toContain(logQuery('top-keys-by-spend'));
  });

  test('every widget fits the 24-column grid', () => {
    for (const widget of widgets) expect(widget.x + widget.width).toBeLessThanOrEqual(24);
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
  });
});
