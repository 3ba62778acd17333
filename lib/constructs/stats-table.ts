import { RemovalPolicy, type CfnResource } from 'aws-cdk-lib';
import { AttributeType, Billing, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { STATS_TABLE, statsKeys } from '../../lambda/usage/stats-table.ts';

/** Fixed logical id, for the same reason as the key table's: a rename must never swap in an empty table. */
export const STATS_TABLE_LOGICAL_ID = 'StatsTable';

/** Partition keys by item kind, as IAM's `dynamodb:LeadingKeys` patterns (lambda/usage/stats-table.ts). */
const EVENTS = 'E#*';
const ROLLUPS = 'R#*';
const CURSOR = statsKeys.cursor.pk;

/**
 * Usage rollups (hour, day and month counters per key, person, group, model and upstream) for the
 * console and for group pools, and on Lambda the per-request usage events they are folded from
 * (docs/console.md, "Usage rollups"). Events and hour rows expire through TTL; day and month rows
 * are a year and five years of history that nothing else holds once the events are gone, so the
 * table has the usage table's protection: point-in-time recovery, deletion protection, retained
 * on stack delete, AWS managed key.
 *
 * Each role gets only its item kinds, by partition key (`dynamodb:LeadingKeys`): the gateway
 * writes events and reads rollups; the aggregator reads events and writes rollups and its cursor.
 */
export class StatsTable extends Construct {
  readonly table: TableV2;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.table = new TableV2(this, 'Table', {
      partitionKey: { name: STATS_TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: STATS_TABLE.sortKey, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      encryption: TableEncryptionV2.awsManagedKey(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      timeToLiveAttribute: STATS_TABLE.ttlAttribute,
    });
    (this.table.node.defaultChild as CfnResource).overrideLogicalId(STATS_TABLE_LOGICAL_ID);
  }

  /** The gateway: PutItem of usage events only; reads of rollups (the console, group pools) and of the cursor ("as of"). */
  grantGateway(grantee: IGrantable): void {
    this.#grant(grantee, ['dynamodb:PutItem'], [EVENTS]);
    this.#grant(grantee, ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'], [ROLLUPS, CURSOR]);
  }

  /** The aggregator: reads events; adds to rollup rows and moves its cursor. */
  grantAggregation(grantee: IGrantable): void {
    this.#grant(grantee, ['dynamodb:Query'], [EVENTS]);
    this.#grant(grantee, ['dynamodb:GetItem', 'dynamodb:UpdateItem'], [ROLLUPS, CURSOR]);
  }

  #grant(grantee: IGrantable, actions: string[], leadingKeys: string[]): Grant {
    return Grant.addToPrincipal({ grantee, actions, resourceArns: [this.table.tableArn], conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': leadingKeys } } });
  }
}
