import { RemovalPolicy, type CfnResource } from 'aws-cdk-lib';
import { AttributeType, Billing, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { USAGE_TABLE } from '../../lambda/usage/usage-table.ts';

/** Fixed logical id, for the same reason as the key table's: a rename must never swap in an empty table. */
export const USAGE_TABLE_LOGICAL_ID = 'UsageTable';

/**
 * Per-key usage (requests and tokens per key, model and UTC day) and the per-minute request
 * counters behind rate limits (lambda/usage/usage-table.ts). Usage is billing evidence, so the
 * table has the key table's protection: point-in-time recovery, deletion protection, retained
 * on stack delete, AWS managed key. The minute counters expire through TTL.
 */
export class UsageTable extends Construct {
  readonly table: TableV2;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.table = new TableV2(this, 'Table', {
      partitionKey: { name: USAGE_TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: USAGE_TABLE.sortKey, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      encryption: TableEncryptionV2.awsManagedKey(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      timeToLiveAttribute: USAGE_TABLE.ttlAttribute,
    });
    (this.table.node.defaultChild as CfnResource).overrideLogicalId(USAGE_TABLE_LOGICAL_ID);
  }

  /**
   * What the gateway does with it: atomic counter updates, reading a key's days for budgets, and
   * its leases on requests in flight (a read when a key is at its cap, to drop expired ones).
   */
  grantMetering(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({ grantee, actions: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem'], resourceArns: [this.table.tableArn] });
  }
}
