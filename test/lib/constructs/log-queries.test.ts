import { LOG_QUERIES, logQuery } from '../../../lib/constructs/log-queries.ts';
import { onlyResource, synthGateway } from '../synth.ts';

describe('saved Logs Insights queries', () => {
  const { template } = synthGateway();
  const definitions = Object.values(template.findResources('AWS::Logs::QueryDefinition')).map((resource: any) => resource.Properties);
  const logGroup = onlyResource(template, 'AWS::Logs::LogGroup', 'Gateway').logicalId;

  test('one per query, named after the stack, scoped to the gateway log group', () => {
    expect(definitions.map((definition) => definition.Name).sort()).toEqual(Object.keys(LOG_QUERIES).map((name) => `AgentGateway/${name}`).sort());
    for (const definition of definitions) expect(definition.LogGroupNames).toEqual([{ Ref: logGroup }]);
  });

  test('spend per key and model, and the top keys, from the request line', () => {
    const spend = definitions.find((definition) => definition.Name === 'AgentGateway/spend-per-key');
    expect(spend.QueryString).toBe(logQuery('spend-per-key'));
    expect(spend.QueryString).toContain('fields CostMicroUsd / 1000000 as costUsd');
    expect(spend.QueryString).toMatch(/stats count\(\*\) as requests, sum\(costUsd\) as usd, .* by keyId, Model\n\| sort usd desc/);
    expect(logQuery('top-keys-by-spend')).toMatch(/by keyId\n\| sort usd desc\n\| limit 20$/);
    expect(logQuery('unpriced-models')).toContain('filter PriceSource = "fallback"');
  });
});
