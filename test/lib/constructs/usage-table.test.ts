import type { CreateTableInput } from '@aws-sdk/client-dynamodb';
import type { DynamoApi } from '../../../lambda/aws/dynamodb.ts';
import { USAGE_TABLE } from '../../../lambda/usage/usage-table.ts';
import { ensureUsageTable } from '../../../bin/local/embedded-store.ts';
import { USAGE_TABLE_LOGICAL_ID } from '../../../lib/constructs/usage-table.ts';
import { synthGateway } from '../synth.ts';

describe('UsageTable', () => {
  const { template } = synthGateway();
  const resource = template.toJSON().Resources[USAGE_TABLE_LOGICAL_ID] as { Type: string; DeletionPolicy: string; UpdateReplacePolicy: string; Properties: Record<string, any> };

  test('has a fixed logical id and the shared schema (keyId + period)', () => {
    expect(resource.Type).toBe('AWS::DynamoDB::GlobalTable');
    expect(resource.Properties.KeySchema).toEqual([
      { AttributeName: USAGE_TABLE.partitionKey, KeyType: 'HASH' },
      { AttributeName: USAGE_TABLE.sortKey, KeyType: 'RANGE' },
    ]);
    expect(resource.Properties.AttributeDefinitions).toEqual([
      { AttributeName: 'keyId', AttributeType: 'S' },
      { AttributeName: 'period', AttributeType: 'S' },
    ]);
  });

  test('is on demand, encrypted with KMS, recoverable, deletion-protected, retained, with TTL for minute counters', () => {
    expect(resource.Properties.BillingMode).toBe('PAY_PER_REQUEST');
    expect(resource.Properties.SSESpecification).toEqual({ SSEEnabled: true, SSEType: 'KMS' });
    expect(resource.Properties.TimeToLiveSpecification).toEqual({ AttributeName: USAGE_TABLE.ttlAttribute, Enabled: true });
    expect(resource.Properties.Replicas[0]).toMatchObject({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true }, DeletionProtectionEnabled: true });
    expect(resource.DeletionPolicy).toBe('Retain');
    expect(resource.UpdateReplacePolicy).toBe('Retain');
  });

  test('matches the table the local embedded store creates', async () => {
    let created: CreateTableInput | undefined;
    const client = { call: async (operation: string, input: CreateTableInput) => void (operation === 'CreateTable' && (created = input)) } as unknown as DynamoApi;
    await ensureUsageTable(client, 'local');
    expect(created?.KeySchema).toEqual(resource.Properties.KeySchema);
    expect(created?.AttributeDefinitions).toEqual(resource.Properties.AttributeDefinitions);
  });
});
