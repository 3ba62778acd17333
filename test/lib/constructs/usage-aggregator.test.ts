import { STATS_TABLE_LOGICAL_ID } from '../../../lib/constructs/stats-table.ts';
import { onlyResource, synthGateway } from '../synth.ts';

describe('UsageAggregator', () => {
  const { template } = synthGateway({ logRetentionDays: 365 });
  const fn = onlyResource(template, 'AWS::Lambda::Function', 'UsageAggregator');

  test('runs lambda/aggregate.ts on Node 24 arm64, one at a time, with the stats table its only contract', () => {
    expect(fn.properties).toMatchObject({
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      Timeout: 90,
      MemorySize: 256,
      ReservedConcurrentExecutions: 1,
      Environment: { Variables: { GATEWAY_STATS_TABLE: { Ref: STATS_TABLE_LOGICAL_ID } } },
      LoggingConfig: { LogFormat: 'JSON', LogGroup: { Ref: onlyResource(template, 'AWS::Logs::LogGroup', 'UsageAggregator').logicalId } },
    });
    expect(Object.keys(fn.properties.Environment.Variables)).toEqual(['GATEWAY_STATS_TABLE']);
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 365 });
  });

  test('an EventBridge rule invokes it every minute; a failed or late run is dropped, not retried', () => {
    const rule = onlyResource(template, 'AWS::Events::Rule', 'UsageAggregator');
    expect(rule.properties).toMatchObject({ ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' });
    expect(rule.properties.Targets).toEqual([expect.objectContaining({ Arn: { 'Fn::GetAtt': [fn.logicalId, 'Arn'] }, RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 } })]);
    template.hasResourceProperties('AWS::Lambda::Permission', { Action: 'lambda:InvokeFunction', Principal: 'events.amazonaws.com', SourceArn: { 'Fn::GetAtt': [rule.logicalId, 'Arn'] } });
    expect(onlyResource(template, 'AWS::Lambda::EventInvokeConfig', 'UsageAggregator').properties).toMatchObject({ MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 });
  });

  test('its role may read events and write rollups and the cursor, and write its own log group; nothing else', () => {
    const role = onlyResource(template, 'AWS::IAM::Role', 'UsageAggregator');
    expect(role.properties.ManagedPolicyArns).toBeUndefined();
    expect(fn.properties.Role).toEqual({ 'Fn::GetAtt': [role.logicalId, 'Arn'] });
    const policy = onlyResource(template, 'AWS::IAM::Policy', 'UsageAggregator');
    expect(policy.properties.Roles).toEqual([{ Ref: role.logicalId }]);
    const table = { 'Fn::GetAtt': [STATS_TABLE_LOGICAL_ID, 'Arn'] };
    expect(policy.properties.PolicyDocument.Statement).toEqual([
      { Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: { 'Fn::GetAtt': [onlyResource(template, 'AWS::Logs::LogGroup', 'UsageAggregator').logicalId, 'Arn'] } },
      { Effect: 'Allow', Action: 'dynamodb:Query', Resource: table, Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['E#*'] } } },
      { Effect: 'Allow', Action: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], Resource: table, Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['R#*', 'AGG'] } } },
    ]);
  });
});
