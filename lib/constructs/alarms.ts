import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, MathExpression, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import type { AlarmsConfig } from '../config.ts';

export interface GatewayAlarmsProps {
  namespace: string;
  function: IFunction;
  config: AlarmsConfig;
}

const PERIOD = Duration.minutes(5);
/** Below this many requests in five minutes a few failures say little: no alarm. */
const MIN_REQUESTS = 10;

/**
 * Optional alarms (the `alarms` setting): the share of 5xx answers, and the function being
 * throttled (out of concurrency: every open stream holds one execution environment). With an
 * email address they notify through an SNS topic; without, they show in the console only.
 */
export class GatewayAlarms extends Construct {
  readonly alarms: Alarm[];
  readonly topic: Topic | undefined;

  constructor(scope: Construct, id: string, props: GatewayAlarmsProps) {
    super(scope, id);
    const sum = (metricName: string) => new Metric({ namespace: props.namespace, metricName, statistic: 'Sum', period: PERIOD });
    const serverErrors = new Alarm(this, 'ServerErrorRate', {
      alarmDescription: `More than ${props.config.serverErrorPercent}% of requests answered 5xx (gateway or upstream) in two of three 5-minute periods.`,
      metric: new MathExpression({
        expression: `IF(requests >= ${MIN_REQUESTS}, 100 * errors / requests, 0)`,
        usingMetrics: { requests: sum('Requests'), errors: sum('ServerErrors') },
        period: PERIOD,
        label: '5xx %',
      }),
      threshold: props.config.serverErrorPercent,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const throttled = new Alarm(this, 'FunctionThrottled', {
      alarmDescription: 'The gateway function was throttled: requests were refused for lack of concurrency (raise reservedConcurrency or the account limit).',
      metric: props.function.metricThrottles({ period: PERIOD, statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.alarms = [serverErrors, throttled];
    if (props.config.email !== undefined) {
      this.topic = new Topic(this, 'Topic', { displayName: 'Agent gateway alarms', enforceSSL: true });
      this.topic.addSubscription(new EmailSubscription(props.config.email));
      for (const alarm of this.alarms) {
        alarm.addAlarmAction(new SnsAction(this.topic));
        alarm.addOkAction(new SnsAction(this.topic));
      }
    }
  }
}
