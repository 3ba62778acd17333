import type { CreateTableInput } from '@aws-sdk/client-dynamodb';
import type { DynamoApi } from '../../../lambda/aws/dynamodb.ts';
import { Template } from 'aws-cdk-lib/assertions';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { KEY_TABLE } from '../../../lambda/auth/key-table.ts';
import { ensureKeyTable } from '../../../bin/local/embedded-store.ts';
import { KEY_TABLE_LOGICAL_ID, KeyTable } from '../../../lib/constructs/key-table.ts';
import { bareStack, onlyResource, synthGateway } from '../synth.ts';

describe('KeyTable', () => {
  const { template } = synthGateway();
  const table = { logicalId: KEY_TABLE_LOGICAL_ID, properties: template.toJSON().Resources[KEY_TABLE_LOGICAL_ID].Properties };

  test('keeps a fixed logical id, so a refactor can never swap in an empty table', () => {
    expect(table.logicalId).toBe(KEY_TABLE_LOGICAL_ID);
  });

  test('uses the shared schema: keyHash partition key, byId keys-only index on id', () => {
    expect(table.properties.KeySchema).toEqual([{ AttributeName: KEY_TABLE.partitionKey, KeyType: 'HASH' }]);
    expect(table.properties.AttributeDefinitions).toEqual([
      { AttributeName: 'keyHash', AttributeType: 'S' },
      { AttributeName: 'id', AttributeType: 'S' },
    ]);
    expect(table.properties.GlobalSecondaryIndexes).toEqual([
      { IndexName: 'byId', KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }], Projection: { ProjectionType: 'KEYS_ONLY' } },
    ]);
    expect(KEY_TABLE).toEqual({ partitionKey: 'keyHash', idIndex: 'byId', idAttribute: 'id', lastUsedAttribute: 'lastUsedAt' });
  });

  test('matches the table the local embedded store creates', async () => {
    let created: CreateTableInput | undefined;
    const recorder = { call: async (operation: string, input: CreateTableInput) => void (operation === 'CreateTable' && (created = input)) } as unknown as DynamoApi;
    await ensureKeyTable(recorder, 'local');
    expect(created?.KeySchema).toEqual(table.properties.KeySchema);
    expect(created?.AttributeDefinitions).toEqual(table.properties.AttributeDefinitions);
    expect(created?.GlobalSecondaryIndexes).toEqual(table.properties.GlobalSecondaryIndexes);
    expect(created?.BillingMode).toBe(table.properties.BillingMode);
  });

  test('is on-demand, KMS-encrypted with the AWS managed key, with no TTL', () => {
    expect(table.properties.BillingMode).toBe('PAY_PER_REQUEST');
    // SSEType KMS without a key id = the AWS managed key aws/dynamodb.
    expect(table.properties.SSESpecification).toEqual({ SSEEnabled: true, SSEType: 'KMS' });
    expect(table.properties.TimeToLiveSpecification).toBeUndefined();
  });

  test('is protected against loss: PITR, deletion protection, retained on delete and replace', () => {
    expect(table.properties.Replicas).toEqual([
      expect.objectContaining({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true }, DeletionProtectionEnabled: true }),
    ]);
    template.hasResource('AWS::DynamoDB::GlobalTable', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
  });

  test('grantKeyLookup allows GetItem, and an UpdateItem of lastUsedAt only that returns nothing, on the table ARN only', () => {
    const stack = bareStack();
    const keys = new KeyTable(stack, 'Keys');
    const role = new Role(stack, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    keys.grantKeyLookup(role);
    const statements = onlyResource(Template.fromStack(stack), 'AWS::IAM::Policy').properties.PolicyDocument.Statement;
    expect(statements).toEqual([
      { Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: { 'Fn::GetAtt': [KEY_TABLE_LOGICAL_ID, 'Arn'] } },
      {
        Effect: 'Allow',
        Action: 'dynamodb:UpdateItem',
        Resource: { 'Fn::GetAtt': [KEY_TABLE_LOGICAL_ID, 'Arn'] },
        // Only the attributes touch() names: it cannot un-revoke a key, extend its expiry or lift its limits.
        Condition: { 'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['keyHash', 'lastUsedAt'] }, StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' } },
      },
    ]);
  });

  test('grantKeyAdministration allows what the console\'s key operations do: Scan, PutItem, UpdateItem on the table, Query on the id index', () => {
    const stack = bareStack();
    const keys = new KeyTable(stack, 'Keys');
    const role = new Role(stack, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    keys.grantKeyAdministration(role);
    const statements = onlyResource(Template.fromStack(stack), 'AWS::IAM::Policy').properties.PolicyDocument.Statement;
    expect(statements).toEqual([
      { Effect: 'Allow', Action: 'dynamodb:Query', Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [KEY_TABLE_LOGICAL_ID, 'Arn'] }, '/index/byId']] } },
      { Effect: 'Allow', Action: ['dynamodb:PutItem', 'dynamodb:Scan', 'dynamodb:UpdateItem'], Resource: { 'Fn::GetAtt': [KEY_TABLE_LOGICAL_ID, 'Arn'] } },
    ]);
  });
});
