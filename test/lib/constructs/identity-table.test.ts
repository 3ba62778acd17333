import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CreateTableInput } from '@aws-sdk/client-dynamodb';
import type { DynamoApi } from '../../../lambda/aws/dynamodb.ts';
import { ensureIdentityTable } from '../../../bin/local/embedded-store.ts';
import { IDENTITY_TABLE, identityKeys } from '../../../lambda/identity/identity-table.ts';
import { IDENTITY_ITEM_ACTIONS, IDENTITY_TABLE_LOGICAL_ID, identityLeadingKeys } from '../../../lib/constructs/identity-table.ts';
import { PROJECT_ROOT } from '../../../lib/constructs/gateway-function.ts';
import { STACK_OUTPUTS } from '../../../lib/output-names.ts';
import { onlyResource, routingWithIdentity, synthGateway } from '../synth.ts';

/** IAM's StringLike: `*` any run of characters, `?` one. */
function stringLike(pattern: string, value: string): boolean {
  const regex = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*').replaceAll('?', '.');
  return new RegExp(`^${regex}$`, 's').test(value);
}

/** Every DynamoDB operation named in the sign-in and console rooms' sources (`call('GetItem', …)`). */
function operationsUsed(): Set<string> {
  const operations = new Set<string>();
  for (const room of ['lambda/identity', 'lambda/admin']) {
    let files: string[];
    try {
      files = readdirSync(join(PROJECT_ROOT, room), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
    } catch {
      continue;
    }
    for (const file of files) {
      for (const match of readFileSync(join(PROJECT_ROOT, room, file), 'utf8').matchAll(/\.call\('([A-Za-z]+)'/g)) operations.add(match[1] as string);
    }
  }
  return operations;
}

describe('IdentityTable', () => {
  const { template } = synthGateway({ routing: routingWithIdentity() });
  const resource = template.toJSON().Resources[IDENTITY_TABLE_LOGICAL_ID] as { Type: string; DeletionPolicy: string; UpdateReplacePolicy: string; Properties: Record<string, any> };

  test('exists only when the routing config has identity', () => {
    expect(synthGateway().template.toJSON().Resources[IDENTITY_TABLE_LOGICAL_ID]).toBeUndefined();
    expect(Object.keys(synthGateway().template.toJSON().Outputs)).not.toContain(STACK_OUTPUTS.identityTableName);
    expect(resource.Type).toBe('AWS::DynamoDB::GlobalTable');
  });

  test('has a fixed logical id and the shared schema (pk + sk, TTL on expiresAt)', () => {
    expect(resource.Properties.KeySchema).toEqual([
      { AttributeName: IDENTITY_TABLE.partitionKey, KeyType: 'HASH' },
      { AttributeName: IDENTITY_TABLE.sortKey, KeyType: 'RANGE' },
    ]);
    expect(resource.Properties.AttributeDefinitions).toEqual([
      { AttributeName: 'pk', AttributeType: 'S' },
      { AttributeName: 'sk', AttributeType: 'S' },
    ]);
    expect(resource.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
  });

  test('is on demand, encrypted with KMS, recoverable, deletion-protected and retained', () => {
    expect(resource.Properties.BillingMode).toBe('PAY_PER_REQUEST');
    expect(resource.Properties.SSESpecification).toEqual({ SSEEnabled: true, SSEType: 'KMS' });
    expect(resource.Properties.Replicas[0]).toMatchObject({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true }, DeletionProtectionEnabled: true });
    expect(resource.DeletionPolicy).toBe('Retain');
    expect(resource.UpdateReplacePolicy).toBe('Retain');
  });

  test('the function may read, write, update, delete and query items of the schema’s partitions only, and is told the table', () => {
    const statements = onlyResource(template, 'AWS::IAM::Policy', 'Gateway').properties.PolicyDocument.Statement as Record<string, any>[];
    const onTable = statements.filter((statement) => JSON.stringify(statement.Resource).includes(IDENTITY_TABLE_LOGICAL_ID));
    expect(onTable).toEqual([
      {
        Effect: 'Allow',
        Action: ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'],
        Resource: { 'Fn::GetAtt': [IDENTITY_TABLE_LOGICAL_ID, 'Arn'] },
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': identityLeadingKeys() } },
      },
    ]);
    const variables = onlyResource(template, 'AWS::Lambda::Function', 'Gateway').properties.Environment.Variables;
    expect(variables.GATEWAY_IDENTITY_TABLE).toEqual({ Ref: IDENTITY_TABLE_LOGICAL_ID });
    expect(template.toJSON().Outputs[STACK_OUTPUTS.identityTableName].Value).toEqual({ Ref: IDENTITY_TABLE_LOGICAL_ID });
  });

  test('the leading keys admit every item kind the schema builds, and nothing outside it', () => {
    const patterns = identityLeadingKeys();
    expect(patterns).toContain('PERSON');
    expect(patterns.every((pattern) => pattern === 'PERSON' || /^[A-Z]+#\*$/.test(pattern))).toBe(true);
    const examples = [
      identityKeys.device('ab'.repeat(32)),
      identityKeys.userCode('BCDF-GHJK'),
      identityKeys.login('cd'.repeat(32)),
      identityKeys.family('f-1'),
      identityKeys.access('ef'.repeat(32)),
      identityKeys.refresh('01'.repeat(32)),
      identityKeys.people(),
      identityKeys.sessions('00u1abc'),
      identityKeys.audit('2026-11-26'),
      identityKeys.rate('device', '10.0.0.1', 1_795_705_200),
      identityKeys.consoleSession('23'.repeat(32)),
      identityKeys.consoleLink('45'.repeat(32)),
    ];
    expect(examples).toHaveLength(Object.keys(identityKeys).length);
    for (const key of examples) expect(patterns.some((pattern) => stringLike(pattern, key))).toBe(true);
    for (const outside of ['KEY#abc', 'E#29595088#3', 'PERSONX', 'R#D#person#2026-11']) expect(patterns.some((pattern) => stringLike(pattern, outside))).toBe(false);
  });

  test('grants every DynamoDB operation the sign-in and console code calls', () => {
    const used = operationsUsed();
    // The sign-in store's five (lambda/identity/store/table.ts); the list finds what is added later.
    expect(used.size).toBeGreaterThanOrEqual(5);
    for (const operation of used) expect(IDENTITY_ITEM_ACTIONS).toContain(`dynamodb:${operation}`);
  });

  test('matches the table the local embedded store creates', async () => {
    let created: CreateTableInput | undefined;
    const client = { call: async (operation: string, input: CreateTableInput) => void (operation === 'CreateTable' && (created = input)) } as unknown as DynamoApi;
    await ensureIdentityTable(client, 'local');
    expect(created?.KeySchema).toEqual(resource.Properties.KeySchema);
    expect(created?.AttributeDefinitions).toEqual(resource.Properties.AttributeDefinitions);
  });
});
