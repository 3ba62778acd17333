import { requestLogLine } from '../../../lambda/observability/request-log.ts';
import { emfRecord, METRICS, NO_VALUE, type RequestMetrics } from '../../../lambda/observability/metrics.ts';
import type { RequestState } from '../../../lambda/request-state.ts';
import { emfViolations } from '../../support/emf.ts';

const base: RequestMetrics = { model: 'claude-sonnet-5', upstream: 'anthropic', status: 200, outcome: undefined, latencyMs: 2_345, ttfbMs: 412, usage: { inputTokens: 12, outputTokens: 850, cacheReadTokens: 45_000, cacheWriteTokens: 3_000, cacheWrite1hTokens: 3_000 }, costMicroUsd: 29_524 };
const TIMESTAMP = Date.parse('2026-11-21T13:57:00Z');

describe('EMF record of a request', () => {
  test('a metered streamed request: every metric, per model and upstream and in total', () => {
    const record = emfRecord(base, { namespace: 'AgentGateway/Prod', timestamp: TIMESTAMP });
    expect(emfViolations(record)).toEqual([]);
    expect(record).toMatchObject({
      Model: 'claude-sonnet-5',
      Upstream: 'anthropic',
      Requests: 1,
      ClientErrors: 0,
      Throttles: 0,
      ServerErrors: 0,
      StreamErrors: 0,
      Latency: 2_345,
      TimeToFirstByte: 412,
      InputTokens: 12,
      OutputTokens: 850,
      CacheReadTokens: 45_000,
      CacheWriteTokens: 3_000,
      CostMicroUsd: 29_524,
    });
    const [perModel, totals] = (record._aws as any).CloudWatchMetrics;
    expect(perModel).toEqual({ Namespace: 'AgentGateway/Prod', Dimensions: [['Upstream', 'Model']], Metrics: Object.entries(METRICS).map(([Name, Unit]) => ({ Name, Unit })) });
    expect(totals.Dimensions).toEqual([[]]);
    expect(totals.Metrics.map((metric: { Name: string }) => metric.Name)).toEqual(['Requests', 'ClientErrors', 'Throttles', 'ServerErrors', 'StreamErrors', 'Latency', 'TimeToFirstByte', 'CostMicroUsd']);
    expect((record._aws as any).Timestamp).toBe(TIMESTAMP);
    expect(record).not.toHaveProperty('PriceSource');
    expect(emfRecord({ ...base, priceSource: 'fallback' }, { timestamp: TIMESTAMP })).toMatchObject({ PriceSource: 'fallback' });
  });

  test.each([
    [401, undefined, { ClientErrors: 1, Throttles: 0, ServerErrors: 0, StreamErrors: 0 }],
    [429, undefined, { ClientErrors: 0, Throttles: 1, ServerErrors: 0, StreamErrors: 0 }],
    [502, 'upstream_unreachable', { ClientErrors: 0, Throttles: 0, ServerErrors: 1, StreamErrors: 0 }],
    [200, 'upstream_truncated', { ClientErrors: 0, Throttles: 0, ServerErrors: 0, StreamErrors: 1 }],
    [200, 'deadline', { StreamErrors: 1 }],
    [200, 'client_closed', { StreamErrors: 0, ServerErrors: 0 }],
    [undefined, undefined, { ServerErrors: 1 }],
  ])('status %s, outcome %s: errors by class', (status, outcome, expected) => {
    const record = emfRecord({ ...base, status, outcome }, { timestamp: TIMESTAMP });
    expect(emfViolations(record)).toEqual([]);
    expect(record).toMatchObject(expected);
  });

  test('a refused request without route or usage: no token, cost or first-byte metrics, dimensions "none"', () => {
    const record = emfRecord({ model: undefined, upstream: undefined, status: 401, outcome: 'unauthorized', latencyMs: 3, ttfbMs: undefined, usage: undefined, costMicroUsd: undefined }, { timestamp: TIMESTAMP });
    expect(emfViolations(record)).toEqual([]);
    expect(record).toMatchObject({ Model: NO_VALUE, Upstream: NO_VALUE, Requests: 1, ClientErrors: 1 });
    for (const absent of ['TimeToFirstByte', 'InputTokens', 'CostMicroUsd']) expect(record).not.toHaveProperty(absent);
    const names = (record._aws as any).CloudWatchMetrics.flatMap((directive: any) => directive.Metrics.map((metric: any) => metric.Name));
    expect(names).not.toContain('TimeToFirstByte');
    expect(names).not.toContain('InputTokens');
    expect((record._aws as any).Namespace).toBeUndefined();
    expect((record._aws as any).CloudWatchMetrics[0].Namespace).toBe('AgentGateway');
  });

  test('dimension values are printable ASCII within the limit', () => {
    const record = emfRecord({ ...base, model: `modèle-${'x'.repeat(2_000)}`, upstream: '  ' }, { timestamp: TIMESTAMP });
    expect(emfViolations(record)).toEqual([]);
    expect((record.Model as string).startsWith('mod?le-')).toBe(true);
    expect(record.Upstream).toBe(NO_VALUE);
  });

  test('the validator catches what the specification forbids', () => {
    expect(emfViolations({ _aws: { Timestamp: 1.5, CloudWatchMetrics: [{ Namespace: '', Dimensions: [['Missing']], Metrics: [{ Name: 'X', Unit: 'Dollars' }] }] }, X: 'one' })).toEqual([
      '_aws.Timestamp must be an integer (epoch ms)',
      'CloudWatchMetrics[0].Namespace must be a string of 1-1024 characters',
      'CloudWatchMetrics[0]: dimension Missing must be a string member of the root',
      'CloudWatchMetrics[0]: metric X must be a number (or up to 100 numbers) on the root',
      'CloudWatchMetrics[0]: metric X has an invalid unit Dollars',
    ]);
    const tooMany = { _aws: { Timestamp: 1, CloudWatchMetrics: [{ Namespace: 'N', Dimensions: [Array.from({ length: 31 }, (_, i) => `D${i}`)], Metrics: Array.from({ length: 101 }, () => ({ Name: 'M' })) }] }, M: 1, ...Object.fromEntries(Array.from({ length: 31 }, (_, i) => [`D${i}`, 'v'])) };
    expect(emfViolations(tooMany)).toEqual(['CloudWatchMetrics[0]: a dimension set is an array of at most 30 keys', 'CloudWatchMetrics[0].Metrics must be an array of at most 100 definitions']);
  });

  describe('the Model dimension is a name the routing config gives or an upstream accepted, else the route\'s glob', () => {
    const state = (fields: Partial<RequestState>) => ({ id: 'req_2', startedAt: TIMESTAMP - 10, respondedAt: TIMESTAMP, family: 'messages', deadline: 0, model: 'claude-made-up-1234', upstream: 'anthropic', upstreamModel: 'claude-made-up-1234', attempts: [], pending: [], release: [], ...fields }) as RequestState;
    const dimension = (fields: Partial<RequestState>) => {
      const record = JSON.parse(requestLogLine(state(fields), 'AgentGateway'));
      expect(emfViolations(record)).toEqual([]);
      return record.Model;
    };
    const viaGlob = { routedModel: 'claude-*' };

    test('a name passed down a glob route: the glob, unless the upstream accepted it', () => {
      expect(dimension({ ...viaGlob, status: 200, modelAccepted: true })).toBe('claude-made-up-1234');
      // Refused (404, 400), or never seen by an upstream: unreachable, timed out, the client gone first.
      for (const status of [404, 400, 502, 504, 499, 429, 529]) expect(dimension({ ...viaGlob, status })).toBe('claude-*');
      // The simulator, or a local token count, answers any name: no upstream accepted it.
      expect(dimension({ ...viaGlob, status: 200 })).toBe('claude-*');
      expect(JSON.parse(requestLogLine(state({ ...viaGlob, status: 404 }), 'AgentGateway'))).toMatchObject({ Model: 'claude-*', ClientErrors: 1, model: 'claude-made-up-1234' });
    });

    test('a name the config gives is the dimension whatever the answer: a client that closed first is still counted under it', () => {
      const named = { model: 'team-fast', upstreamModel: 'qwen3-coder', routedModel: 'qwen3-coder' };
      for (const status of [200, 499, 502, 404]) expect(dimension({ ...named, status })).toBe('qwen3-coder');
      const exact = { model: 'claude-sonnet-5', upstreamModel: 'claude-sonnet-5', routedModel: 'claude-sonnet-5' };
      expect(dimension({ ...exact, status: 499, outcome: 'client_closed' })).toBe('claude-sonnet-5');
    });

    test('no upstream tried: no model dimension', () => {
      expect(dimension({ upstream: undefined, upstreamModel: undefined, status: 401 })).toBe(NO_VALUE);
    });
  });

  test('merges into the request log line without overwriting any of its fields', () => {
    const state = { id: 'req_1', startedAt: TIMESTAMP - 2_345, respondedAt: TIMESTAMP, family: 'messages', deadline: 0, model: 'claude-sonnet-5', upstream: 'anthropic', status: 200, firstByteAt: TIMESTAMP - 1_933, usage: base.usage, attempts: [], pending: [], afterResponse: [], release: [] } as unknown as RequestState;
    const line = JSON.parse(requestLogLine(state));
    const record = emfRecord(base, { timestamp: TIMESTAMP });
    expect(Object.keys(line).filter((key) => key in record)).toEqual([]);
    const merged = { ...line, ...record };
    expect(emfViolations(merged)).toEqual([]);
    expect(merged).toMatchObject({ msg: 'request', model: 'claude-sonnet-5', Model: 'claude-sonnet-5', latencyMs: 2_345, Latency: 2_345 });
  });
});
