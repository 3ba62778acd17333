import { Match } from 'aws-cdk-lib/assertions';
import { onlyResource, synthGateway } from '../synth.ts';

describe('alarms', () => {
  test('none unless configured', () => {
    const { template } = synthGateway();
    template.resourceCountIs('AWS::CloudWatch::Alarm', 0);
    template.resourceCountIs('AWS::SNS::Topic', 0);
  });

  test('5xx share over the EMF totals and function throttling, without notification when no email is set', () => {
    const { template } = synthGateway({ alarms: { serverErrorPercent: 2 } });
    template.resourceCountIs('AWS::CloudWatch::Alarm', 2);
    template.resourceCountIs('AWS::SNS::Topic', 0);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Threshold: 2,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
      TreatMissingData: 'notBreaching',
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: 'IF(requests >= 10, 100 * errors / requests, 0)', ReturnData: true }),
        Match.objectLike({ Id: 'requests', MetricStat: Match.objectLike({ Metric: { MetricName: 'Requests', Namespace: 'AgentGateway' } }) }),
        Match.objectLike({ Id: 'errors', MetricStat: Match.objectLike({ Metric: { MetricName: 'ServerErrors', Namespace: 'AgentGateway' }, Stat: 'Sum', Period: 300 }), ReturnData: false }),
      ]),
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Throttles',
      Namespace: 'AWS/Lambda',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: onlyResource(template, 'AWS::Lambda::Function', 'Gateway').logicalId } }],
    });
  });

  test('with an email: an SNS topic (TLS only) subscribed by email, notified on alarm and on recovery', () => {
    const { template } = synthGateway({ alarms: { email: 'ops@example.com' } });
    const topic = onlyResource(template, 'AWS::SNS::Topic').logicalId;
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: topic } });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
    for (const alarm of Object.values(template.findResources('AWS::CloudWatch::Alarm')) as any[]) {
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topic }]);
      expect(alarm.Properties.OKActions).toEqual([{ Ref: topic }]);
    }
  });
});
