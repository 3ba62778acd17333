import { fileURLToPath } from 'node:url';
import { Duration, Validations } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, LoggingFormat, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { HANDLER_BUNDLING, PROJECT_ROOT } from './gateway-function.ts';
import type { StatsTable } from './stats-table.ts';

/** The aggregator's Lambda entry; exported for the bundle-budget test. */
export const AGGREGATOR_ENTRY = fileURLToPath(new URL('../../lambda/aggregate.ts', import.meta.url));

export interface UsageAggregatorProps {
  statsTable: StatsTable;
  logRetention: RetentionDays;
}

/**
 * Folds the gateway's per-request usage events into the rollups (lambda/aggregate.ts): an
 * EventBridge rule runs it every minute, and a reserved concurrency of 1 keeps runs from
 * overlapping (they would be harmless: every rollup write is conditioned on the row's watermark,
 * docs/console.md). A run that fails is not retried: the next one, a minute later, starts from
 * the cursor the failed one left.
 */
export class UsageAggregator extends Construct {
  readonly function: NodejsFunction;
  readonly logGroup: LogGroup;
  readonly rule: Rule;

  constructor(scope: Construct, id: string, props: UsageAggregatorProps) {
    super(scope, id);
    this.logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention });
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'Agent gateway usage aggregator: its log group, reading usage events and writing rollups in the stats table only.',
    });
    this.logGroup.grantWrite(role);
    props.statsTable.grantAggregation(role);

    this.function = new NodejsFunction(this, 'Handler', {
      entry: AGGREGATOR_ENTRY,
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: `${PROJECT_ROOT}package-lock.json`,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      bundling: HANDLER_BUNDLING,
      role,
      logGroup: this.logGroup,
      loggingFormat: LoggingFormat.JSON,
      // A run starts no minute after 45 s (lambda/aggregate.ts); the rest is margin for the last one.
      timeout: Duration.seconds(90),
      memorySize: 256,
      reservedConcurrentExecutions: 1,
      // A failed or throttled run is dropped, not retried: the next scheduled one resumes from the cursor.
      retryAttempts: 0,
      maxEventAge: Duration.minutes(1),
      description: 'Agent gateway: folds per-request usage events into hour/day/month rollups, every minute',
      environment: { GATEWAY_STATS_TABLE: props.statsTable.table.tableName },
    });
    this.rule = new Rule(this, 'EveryMinute', {
      schedule: Schedule.rate(Duration.minutes(1)),
      targets: [new LambdaFunction(this.function, { retryAttempts: 0, maxEventAge: Duration.minutes(1) })],
    });

    // A run is a schedule tick with no payload, and a failed one loses nothing: the cursor stays where it was.
    const noPayload = 'Each run is a schedule tick with no payload: a failed run leaves the cursor where it was and the next tick, a minute later, redoes its work; a dead-letter queue or failure destination would hold empty ticks.';
    for (const id of ['Serverless-LambdaDLQ', 'Serverless-LambdaAsyncFailureDestination', 'Serverless-EventBusDLQ']) Validations.of(this).acknowledge({ id, reason: noPayload });
    Validations.of(this).acknowledge({
      id: 'Serverless-LambdaTracing',
      reason: 'A run logs one line with what it folded and how long it took; traces of a scheduled batch job are not worth their cost.',
    });
  }
}
