import { RemovalPolicy, type CfnResource } from 'aws-cdk-lib';
import { AttributeType, Billing, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { IDENTITY_TABLE, identityKeys } from '../../lambda/identity/identity-table.ts';

/** Fixed logical id, for the same reason as the key table's: a rename must never swap in an empty table. */
export const IDENTITY_TABLE_LOGICAL_ID = 'IdentityTable';

/**
 * What the gateway does with sign-in items (lambda/identity/store/): read them (GetItem, and Query
 * over a partition: a person's sessions, the people, a day of audit events), write them whole
 * (PutItem), change them in place (UpdateItem: counters, rotation, revocation) and consume them
 * (DeleteItem: single-use codes and state). No Scan, no batch or transaction, nothing on the table
 * itself.
 */
export const IDENTITY_ITEM_ACTIONS = ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'];

/**
 * The partition keys the schema names (lambda/identity/identity-table.ts), as IAM
 * `dynamodb:LeadingKeys` patterns: `DEVICE#*`, `PERSON`, …. Derived from the key builders, so a
 * new item kind there is granted here by the next deploy, and an item outside the schema is not.
 */
export function identityLeadingKeys(): string[] {
  const patterns = Object.values(identityKeys).map((build) => {
    // Every builder takes strings or numbers; a probe value shows where its variable part starts.
    const key = (build as (...parts: unknown[]) => string)('\u0000', '\u0000', 0);
    const fixed = key.split('\u0000')[0] as string;
    if (fixed === '') throw new Error(`identity key ${key} starts with its variable part: no leading-key pattern can confine it`);
    return fixed === key ? key : `${fixed}*`;
  });
  return [...new Set(patterns)].sort();
}

/**
 * Sign-in's table (one generic table: partition key `pk`, sort key `sk`, TTL on `expiresAt`): device
 * grants, sign-in transactions, sessions and their tokens (as SHA-256 digests), the people who
 * signed in with their overrides, per-IP counters and the audit trail. Created only when the
 * routing config has `identity`.
 *
 * Protected like the usage table (point-in-time recovery, deletion protection, retained on stack
 * delete, AWS managed key): the people, their cap overrides and the audit events exist nowhere
 * else. Short-lived items (codes, tokens, counters) expire through TTL.
 */
export class IdentityTable extends Construct {
  readonly table: TableV2;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.table = new TableV2(this, 'Table', {
      partitionKey: { name: IDENTITY_TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: IDENTITY_TABLE.sortKey, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      encryption: TableEncryptionV2.awsManagedKey(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      timeToLiveAttribute: IDENTITY_TABLE.ttlAttribute,
    });
    (this.table.node.defaultChild as CfnResource).overrideLogicalId(IDENTITY_TABLE_LOGICAL_ID);
  }

  /** The item actions above, on the schema's partitions only. */
  grantSignIn(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({
      grantee,
      actions: IDENTITY_ITEM_ACTIONS,
      resourceArns: [this.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': identityLeadingKeys() } },
    });
  }
}
