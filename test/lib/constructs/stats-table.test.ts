import type { CreateTableInput } from '@aws-sdk/client-dynamodb';
import type { DynamoApi } from '../../../lambda/aws/dynamodb.ts';
import { STATS_TABLE } from '../../../lambda/usage/stats-table.ts';
import { ensureStatsTable } from '../../../bin/local/embedded-store.ts';
import { STATS_TABLE_LOGICAL_ID } from '../../../lib/constructs/stats-table.ts';
import { onlyResource, synthGateway } from '../synth.ts';

describe('StatsTable', () => {
  const { template } = synthGateway();
  const resource = template.toJSON().Resources[STATS_TABLE_LOGICAL_ID] as { Type: string; DeletionPolicy: string; UpdateReplacePolicy: string; Properties: Record<string, any> };

  test('has a fixed logical id and the shared schema (pk + sk)', () => {
    expect(resource.Type).toBe('AWS::DynamoDB::GlobalTable');
    expect(resource.Properties.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
  });

  test('is on demand, encrypted with KMS, recoverable, deletion-protected, retained, with TTL for events and rows past retention', () => {
    expect(resource.Properties.BillingMode).toBe('PAY_PER_REQUEST');
    expect(resource.Properties.SSESpecification).toEqual({ SSEEnabled: true, SSEType: 'KMS' });
    expect(resource.Properties.TimeToLiveSpecification).toEqual({ AttributeName: STATS_TABLE.ttlAttribute, Enabled: true });
    expect(resource.Properties.Replicas[0]).toMatchObject({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true }, DeletionProtectionEnabled: true });
    expect(resource.DeletionPolicy).toBe('Retain');
  });

  test('matches the table the local embedded store creates', async () => {
    let created: CreateTableInput | undefined;
    const client = { call: async (operation: string, input: CreateTableInput) => void (operation === 'CreateTable' && (created = input)) } as unknown as DynamoApi;
    await ensureStatsTable(client, 'local');
    expect(created?.KeySchema).toEqual(resource.Properties.KeySchema);
    expect(created?.AttributeDefinitions).toEqual(resource.Properties.AttributeDefinitions);
  });

  test('the gateway may only put events and read rollups and the cursor; it can change no rollup', () => {
    const statements = onlyResource(template, 'AWS::IAM::Policy', 'Gateway').properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown; Condition?: unknown }[];
    const onStats = statements.filter((statement) => JSON.stringify(statement.Resource).includes(STATS_TABLE_LOGICAL_ID));
    expect(onStats).toEqual([
      expect.objectContaining({ Action: 'dynamodb:PutItem', Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['E#*'] } } }),
      expect.objectContaining({ Action: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'], Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['R#*', 'AGG'] } } }),
    ]);
  });
});
