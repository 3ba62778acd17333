import { startRealProbe, type RealProbe } from './probe-runtimes.ts';

/**
 * What reaches stdout, under the real runtime interface client with the stack's JSON log format
 * (AWS_LAMBDA_LOG_FORMAT=JSON), for each way a Node.js function can write a log line. Each
 * stdout line is one CloudWatch log event; Logs Insights discovers the fields of a JSON event,
 * and CloudWatch extracts Embedded Metric Format metrics only from an event whose top level holds
 * `_aws` (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html).
 */
let real: RealProbe;

beforeAll(async () => {
  real = await startRealProbe();
});

afterAll(async () => {
  await real.close();
});

test('console.log(string) wraps the string; console.log(object) nests the object; process.stdout.write passes the line through', async () => {
  const response = await real.get('/logs');
  expect(response.status).toBe(200);
  const requestId = real.lambda.api.outcomes.at(-1)?.requestId;
  const [fromString, fromObject, fromWrite, ...rest] = real.lambda.stdout.map((line) => JSON.parse(line));
  expect(rest).toEqual([]);
  const original = { msg: 'request', status: 200, _aws: { Timestamp: 0, CloudWatchMetrics: [{ Namespace: 'Gateway', Dimensions: [[]], Metrics: [{ Name: 'Requests' }] }] }, Requests: 1 };

  // console.log(JSON.stringify(x)): the runtime's envelope, with x as an escaped string in
  // `message`: no field of x is a field of the event, and `_aws` is not at the top level.
  expect(fromString).toEqual({ timestamp: expect.any(String), level: 'INFO', requestId, message: JSON.stringify(original) });

  // console.log(x): the same envelope with x nested under `message` (fields as message.status,
  // ...); `_aws` is message._aws, so no metric is extracted.
  expect(fromObject).toEqual({ timestamp: expect.any(String), level: 'INFO', requestId, message: original });

  // process.stdout.write(JSON.stringify(x) + '\n'): the line itself is the event: its fields are
  // top-level fields and `_aws` is where EMF needs it. The runtime adds no request id or level.
  expect(fromWrite).toEqual(original);
});
