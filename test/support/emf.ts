/**
 * The rules of the Embedded Metric Format specification
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html),
 * checked on a record; returns every violation.
 */
const UNITS = /^(Seconds|Microseconds|Milliseconds|Bytes|Kilobytes|Megabytes|Gigabytes|Terabytes|Bits|Kilobits|Megabits|Gigabits|Terabits|Percent|Count|Bytes\/Second|Kilobytes\/Second|Megabytes\/Second|Gigabytes\/Second|Terabytes\/Second|Bits\/Second|Kilobits\/Second|Megabits\/Second|Gigabits\/Second|Terabits\/Second|Count\/Second|None)$/;

export function emfViolations(record: Record<string, any>): string[] {
  const problems: string[] = [];
  const aws = record._aws;
  if (typeof aws !== 'object' || aws === null) return ['_aws must be an object'];
  if (!Number.isInteger(aws.Timestamp)) problems.push('_aws.Timestamp must be an integer (epoch ms)');
  if (!Array.isArray(aws.CloudWatchMetrics)) return [...problems, '_aws.CloudWatchMetrics must be an array'];
  for (const [index, directive] of aws.CloudWatchMetrics.entries()) {
    const at = `CloudWatchMetrics[${index}]`;
    if (typeof directive.Namespace !== 'string' || directive.Namespace.length < 1 || directive.Namespace.length > 1024) problems.push(`${at}.Namespace must be a string of 1-1024 characters`);
    if (!Array.isArray(directive.Dimensions) || directive.Dimensions.length < 1) problems.push(`${at}.Dimensions must be a non-empty array of dimension sets`);
    for (const set of directive.Dimensions ?? []) {
      if (!Array.isArray(set) || set.length > 30) problems.push(`${at}: a dimension set is an array of at most 30 keys`);
      for (const key of set ?? []) {
        const value = record[key];
        if (typeof value !== 'string') problems.push(`${at}: dimension ${key} must be a string member of the root`);
        else if (value.length > 1024 || value.trim() === '' || /[^\x20-\x7e]/.test(value)) problems.push(`${at}: dimension ${key} must be 1-1024 printable ASCII characters`);
      }
    }
    if (!Array.isArray(directive.Metrics) || directive.Metrics.length > 100) problems.push(`${at}.Metrics must be an array of at most 100 definitions`);
    for (const metric of directive.Metrics ?? []) {
      if (typeof metric.Name !== 'string' || metric.Name.length < 1) problems.push(`${at}: a metric needs a Name`);
      const value = record[metric.Name];
      const numeric = typeof value === 'number' && Number.isFinite(value);
      const numericArray = Array.isArray(value) && value.length <= 100 && value.every((item) => typeof item === 'number');
      if (!numeric && !numericArray) problems.push(`${at}: metric ${metric.Name} must be a number (or up to 100 numbers) on the root`);
      if (metric.Unit !== undefined && !UNITS.test(metric.Unit)) problems.push(`${at}: metric ${metric.Name} has an invalid unit ${metric.Unit}`);
    }
  }
  return problems;
}
