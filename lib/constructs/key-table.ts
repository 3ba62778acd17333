import { RemovalPolicy, type CfnResource } from 'aws-cdk-lib';
import { AttributeType, Billing, ProjectionType, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, PolicyStatement, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { KEY_TABLE } from '../../lambda/auth/key-table.ts';

/**
 * Fixed CloudFormation logical id of the table. A logical id change makes CloudFormation create
 * a new, empty table (the retained old one is orphaned with every issued key), so it must not
 * follow construct renames.
 */
export const KEY_TABLE_LOGICAL_ID = 'KeyTable';

/**
 * The issued-key table: one item per key, addressed by the key's SHA-256, with the schema the
 * local store and the key CLI use (lambda/auth/key-table.ts). Keys are the gateway's only
 * authentication, so the table is protected against loss: point-in-time recovery, deletion
 * protection, and retained when the stack is destroyed.
 *
 * Encrypted with the AWS managed key (`aws/dynamodb`) rather than the default AWS owned key:
 * its use is logged in CloudTrail and it satisfies the common "DynamoDB encrypted with KMS"
 * compliance rule, at no key cost, without giving the function any KMS permission to manage.
 *
 * No TTL: expired keys are refused by the gateway and stay listed for audit until revoked.
 */
export class KeyTable extends Construct {
  readonly table: TableV2;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.table = new TableV2(this, 'Table', {
      partitionKey: { name: KEY_TABLE.partitionKey, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      encryption: TableEncryptionV2.awsManagedKey(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      globalSecondaryIndexes: [
        {
          // The key CLI revokes by public id; only the key attributes are needed to find the item.
          indexName: KEY_TABLE.idIndex,
          partitionKey: { name: KEY_TABLE.idAttribute, type: AttributeType.STRING },
          projectionType: ProjectionType.KEYS_ONLY,
        },
      ],
    });
    (this.table.node.defaultChild as CfnResource).overrideLogicalId(KEY_TABLE_LOGICAL_ID);
  }

  /**
   * What the gateway does with the table: read a key by its hash and stamp `lastUsedAt`. On the
   * table itself only; the index is for the operator's CLI, which uses its own credentials. The
   * update may touch no attribute but `lastUsedAt` (and the key it is addressed and conditioned
   * by) and return nothing (`dynamodb:Attributes`, `dynamodb:ReturnValues`,
   * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html):
   * whoever runs code as the function cannot un-revoke a key, extend its expiry or lift its
   * limits.
   */
  grantKeyLookup(grantee: IGrantable): Grant {
    const read = Grant.addToPrincipal({ grantee, actions: ['dynamodb:GetItem'], resourceArns: [this.table.tableArn] });
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:UpdateItem'],
        resources: [this.table.tableArn],
        conditions: {
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': [KEY_TABLE.partitionKey, KEY_TABLE.lastUsedAttribute] },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
        },
      }),
    );
    return read;
  }

  /**
   * What the console's admin API does with the table (lambda/auth/key-operations.ts, served by
   * the same function at /admin/api): list keys a page at a time (Scan), find a key's items by its
   * public id (Query on the id index), create and rotate (PutItem), change and revoke
   * (UpdateItem). With it, code running as the function can change any key; the console's own
   * callers are checked in lambda/admin/access.ts (docs/console.md, "What the console adds").
   */
  grantKeyAdministration(grantee: IGrantable): Grant {
    Grant.addToPrincipal({ grantee, actions: ['dynamodb:Query'], resourceArns: [`${this.table.tableArn}/index/${KEY_TABLE.idIndex}`] });
    return Grant.addToPrincipal({ grantee, actions: ['dynamodb:PutItem', 'dynamodb:Scan', 'dynamodb:UpdateItem'], resourceArns: [this.table.tableArn] });
  }
}
