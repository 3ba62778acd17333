import { jest } from '@jest/globals';
import { Token } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { settingsFromEnv } from '../../lambda/config/settings.ts';
import { CONFIG_FILE_NAME } from '../../lib/constructs/config-file.ts';
import { KEY_TABLE_LOGICAL_ID } from '../../lib/constructs/key-table.ts';
import { STATS_TABLE_LOGICAL_ID } from '../../lib/constructs/stats-table.ts';
import { USAGE_TABLE_LOGICAL_ID } from '../../lib/constructs/usage-table.ts';
import { UPSTREAM_SECRET_LOGICAL_ID } from '../../lib/constructs/upstream-secret.ts';
import { STACK_OUTPUTS } from '../../lib/output-names.ts';
import { onlyResource, synthGateway } from './synth.ts';

const ROUTING = { upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }] };

describe('GatewayStack', () => {
  const { template, stack, app, config } = synthGateway();

  test('runs lambda/handler.ts on Node 24, arm64, with JSON logs into a log group with retention', () => {
    const fn = onlyResource(template, 'AWS::Lambda::Function', 'Gateway');
    expect(fn.properties).toMatchObject({
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      Timeout: 900,
      MemorySize: 256,
      LoggingConfig: { LogFormat: 'JSON', LogGroup: { Ref: onlyResource(template, 'AWS::Logs::LogGroup', 'Gateway').logicalId } },
    });
    // The public URL's invocations are capped by default (lib/config.ts says why 100); null leaves them to the account's pool.
    expect(fn.properties.ReservedConcurrentExecutions).toBe(100);
    expect(onlyResource(synthGateway({ reservedConcurrency: null }).template, 'AWS::Lambda::Function', 'Gateway').properties.ReservedConcurrentExecutions).toBeUndefined();
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 90 });
  });

  test('serves one streaming Function URL with auth type NONE and no CORS by default', () => {
    const url = onlyResource(template, 'AWS::Lambda::Url');
    expect(url.properties).toEqual({
      AuthType: 'NONE',
      InvokeMode: 'RESPONSE_STREAM',
      TargetFunctionArn: { 'Fn::GetAtt': [onlyResource(template, 'AWS::Lambda::Function', 'Gateway').logicalId, 'Arn'] },
    });
    // Both permissions of the dual-auth model, or the URL answers 403 (https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html).
    template.hasResourceProperties('AWS::Lambda::Permission', { Action: 'lambda:InvokeFunctionUrl', FunctionUrlAuthType: 'NONE', Principal: '*' });
    template.hasResourceProperties('AWS::Lambda::Permission', { Action: 'lambda:InvokeFunction', InvokedViaFunctionUrl: true, Principal: '*' });
  });

  test('passes the handler its contract: the config file in its bundle, table names, secret ARN, and nothing secret', () => {
    const variables: Record<string, unknown> = onlyResource(template, 'AWS::Lambda::Function', 'Gateway').properties.Environment.Variables;
    expect(Object.keys(variables).sort()).toEqual(['AWS_LAMBDA_EXEC_WRAPPER', 'GATEWAY_CONFIG_FILE', 'GATEWAY_KEYS_TABLE', 'GATEWAY_METRICS_NAMESPACE', 'GATEWAY_STATS_TABLE', 'GATEWAY_UPSTREAM_SECRET', 'GATEWAY_USAGE_TABLE']);
    expect(variables.GATEWAY_STATS_TABLE).toEqual({ Ref: STATS_TABLE_LOGICAL_ID });
    expect(variables.GATEWAY_METRICS_NAMESPACE).toBe(config.stackName);
    expect(variables.GATEWAY_USAGE_TABLE).toEqual({ Ref: USAGE_TABLE_LOGICAL_ID });
    // The file itself is written beside the bundle (test/lib/constructs/gateway-function.test.ts reads it).
    expect(variables.GATEWAY_CONFIG_FILE).toBe(CONFIG_FILE_NAME);
    expect(variables.GATEWAY_KEYS_TABLE).toEqual({ Ref: KEY_TABLE_LOGICAL_ID });
    expect(variables.GATEWAY_UPSTREAM_SECRET).toEqual({ Ref: UPSTREAM_SECRET_LOGICAL_ID });
    expect(JSON.stringify(variables)).not.toContain('resolve:secretsmanager');
  });

  test("grants GetItem and an UpdateItem of lastUsedAt on the key table for requests and the console's key operations, GetItem/Query/UpdateItem on the usage table, event writes and rollup reads on the stats table, read on the secret and writes to its own log group", () => {
    const role = onlyResource(template, 'AWS::IAM::Role', 'Gateway');
    expect(role.properties.ManagedPolicyArns).toBeUndefined();
    expect(role.properties.Policies).toBeUndefined();
    const policy = onlyResource(template, 'AWS::IAM::Policy', 'Gateway');
    expect(policy.properties.Roles).toEqual([{ Ref: role.logicalId }]);
    expect(policy.properties.PolicyDocument.Statement).toEqual([
      {
        Effect: 'Allow',
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: { 'Fn::GetAtt': [onlyResource(template, 'AWS::Logs::LogGroup', 'Gateway').logicalId, 'Arn'] },
      },
      // Requests read keys; the console's admin API also lists them (Scan, a page at a time), creates and rotates (PutItem), changes and revokes (UpdateItem).
      { Effect: 'Allow', Action: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Scan', 'dynamodb:UpdateItem'], Resource: { 'Fn::GetAtt': [KEY_TABLE_LOGICAL_ID, 'Arn'] } },
      {
        Effect: 'Allow',
        Action: 'dynamodb:UpdateItem',
        Resource: { 'Fn::GetAtt': [KEY_TABLE_LOGICAL_ID, 'Arn'] },
        Condition: { 'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['keyHash', 'lastUsedAt'] }, StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' } },
      },
      // ...and finds a key's items by its public id.
      { Effect: 'Allow', Action: 'dynamodb:Query', Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [KEY_TABLE_LOGICAL_ID, 'Arn'] }, '/index/byId']] } },
      { Effect: 'Allow', Action: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem'], Resource: { 'Fn::GetAtt': [USAGE_TABLE_LOGICAL_ID, 'Arn'] } },
      { Effect: 'Allow', Action: 'dynamodb:PutItem', Resource: { 'Fn::GetAtt': [STATS_TABLE_LOGICAL_ID, 'Arn'] }, Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['E#*'] } } },
      { Effect: 'Allow', Action: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'], Resource: { 'Fn::GetAtt': [STATS_TABLE_LOGICAL_ID, 'Arn'] }, Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['R#*', 'AGG'] } } },
      { Effect: 'Allow', Action: ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'], Resource: { Ref: UPSTREAM_SECRET_LOGICAL_ID } },
    ]);
    expect(onlyResource(template, 'AWS::Lambda::Function', 'Gateway').properties.Role).toEqual({ 'Fn::GetAtt': [role.logicalId, 'Arn'] });
  });

  test('has no wildcard action or resource in any IAM statement', () => {
    const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap((policy) => policy.Properties.PolicyDocument.Statement);
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) {
      for (const action of [statement.Action].flat()) expect(action).not.toContain('*');
      for (const resource of [statement.Resource].flat()) expect(resource).not.toEqual('*');
    }
  });

  test('outputs the addresses, the table and the secret under fixed names, with no exports', () => {
    const functionUrl = { 'Fn::GetAtt': [onlyResource(template, 'AWS::Lambda::Url').logicalId, 'FunctionUrl'] };
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown; Export?: unknown }>;
    expect(Object.keys(outputs).sort()).toEqual(
      [STACK_OUTPUTS.functionUrl, STACK_OUTPUTS.messagesBaseUrl, STACK_OUTPUTS.responsesBaseUrl, STACK_OUTPUTS.keyTableName, STACK_OUTPUTS.usageTableName, STACK_OUTPUTS.upstreamSecretName, STACK_OUTPUTS.upstreamSecretArn, STACK_OUTPUTS.dashboardUrl].sort(),
    );
    expect(outputs[STACK_OUTPUTS.functionUrl]?.Value).toEqual(functionUrl);
    expect(outputs[STACK_OUTPUTS.messagesBaseUrl]?.Value).toEqual({ 'Fn::Join': ['', [functionUrl, 'first']] });
    expect(outputs[STACK_OUTPUTS.responsesBaseUrl]?.Value).toEqual({ 'Fn::Join': ['', [functionUrl, 'second/v1']] });
    expect(outputs[STACK_OUTPUTS.keyTableName]?.Value).toEqual({ Ref: KEY_TABLE_LOGICAL_ID });
    expect(outputs[STACK_OUTPUTS.usageTableName]?.Value).toEqual({ Ref: USAGE_TABLE_LOGICAL_ID });
    expect(outputs[STACK_OUTPUTS.upstreamSecretArn]?.Value).toEqual({ Ref: UPSTREAM_SECRET_LOGICAL_ID });
    expect(JSON.stringify(outputs[STACK_OUTPUTS.upstreamSecretName]?.Value)).toContain(UPSTREAM_SECRET_LOGICAL_ID);
    for (const output of Object.values(outputs)) expect(output.Export).toBeUndefined();
  });

  test('is environment-agnostic and needs no lookups, so synth stays offline', () => {
    expect(Token.isUnresolved(stack.account)).toBe(true);
    expect(Token.isUnresolved(stack.region)).toBe(true);
    expect(app.synth().manifest.missing).toBeUndefined();
  });

  test('makes timeout, memory, reserved concurrency and log retention configurable', () => {
    const { template: tuned } = synthGateway({ timeoutSeconds: 300, memoryMb: 1024, reservedConcurrency: 20, logRetentionDays: 365 });
    tuned.hasResourceProperties('AWS::Lambda::Function', { Timeout: 300, MemorySize: 1024, ReservedConcurrentExecutions: 20 });
    tuned.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 365 });
  });

  test('turns CORS on for the configured origins', () => {
    const { template: withCors } = synthGateway({ cors: { allowedOrigins: ['https://app.example.com'], maxAgeSeconds: 600 } });
    withCors.hasResourceProperties('AWS::Lambda::Url', {
      Cors: {
        AllowOrigins: ['https://app.example.com'],
        AllowMethods: ['GET', 'POST'],
        AllowHeaders: ['authorization', 'content-type', 'x-api-key', 'anthropic-version', 'anthropic-beta'],
        MaxAge: 600,
      },
    });
  });

  test('passes tuning settings in the variables the runtime reads', () => {
    const tuning = { keyCacheSeconds: 7, maxBodyBytes: 1_000_000, firstByteTimeoutMs: 45_000, deadlineMarginMs: 3_000, lastUsedIntervalSeconds: 60, streamPadBytes: 16_384 };
    const { template: tuned } = synthGateway({ tuning });
    const variables = onlyResource(tuned, 'AWS::Lambda::Function', 'Gateway').properties.Environment.Variables as NodeJS.ProcessEnv;
    expect(settingsFromEnv(variables)).toMatchObject(tuning);
  });

  test('warns at synth time about a public provider upstream that would be called without a key', () => {
    const quiet = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('without a key'));
    expect(quiet).toEqual([]);
    const routing = { upstreams: { anthropic: { type: 'anthropic' }, sim: ROUTING.upstreams.sim }, routes: [{ model: '*', upstream: 'anthropic' }] };
    // Synthesis prints warnings (the validation report): that print is what the operator sees.
    const printed = jest.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const { stack: careless } = synthGateway({ routing });
      Annotations.fromStack(careless).hasWarning('*', Match.stringLikeRegexp('Upstream "anthropic" \\(anthropic\\) has no "apiKeyEnv"'));
      expect(printed.mock.calls.flat().join('\n')).toContain('Upstream "anthropic" (anthropic) has no "apiKeyEnv"');
    } finally {
      printed.mockRestore();
    }
  });

  test('names the stack after the configured stackName', () => {
    expect(synthGateway({ stackName: 'GatewayStaging', routing: ROUTING }).stack.stackName).toBe('GatewayStaging');
  });
});
