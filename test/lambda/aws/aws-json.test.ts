import { awsEndpoint, awsJsonCall } from '../../../lambda/aws/aws-json.ts';
import { JSON_FAKE_CREDENTIALS, startAwsJsonFake, type JsonAnswer } from '../../support/aws-json-fake.ts';

const service = (url: string, region = 'eu-west-1') => ({ service: 'secretsmanager', targetPrefix: 'secretsmanager', jsonVersion: '1.1', region, endpoint: url, credentials: async () => JSON_FAKE_CREDENTIALS });

describe('awsJsonCall', () => {
  test('a signed call the service verifies; the output parsed; the error by its service name', async () => {
    const fake = await startAwsJsonFake({
      service: 'secretsmanager',
      targetPrefix: 'secretsmanager',
      region: 'eu-west-1',
      handlers: {
        Echo: (input) => ({ output: { got: input } }),
        Refuse: () => ({ status: 400, error: 'ValidationException', message: 'bad input' }),
      },
    });
    expect(await awsJsonCall(service(fake.url), 'Echo', { a: 'é', n: [1] })).toEqual({ got: { a: 'é', n: [1] } });
    await expect(awsJsonCall(service(fake.url), 'Refuse', {})).rejects.toMatchObject({ name: 'ValidationException', message: 'bad input', status: 400 });
    expect(fake.calls.map((call) => call.operation)).toEqual(['Echo', 'Refuse']);
    // Signed for another region: the service refuses it, and a refusal is not retried.
    await expect(awsJsonCall(service(fake.url, 'us-east-1'), 'Echo', {})).rejects.toMatchObject({ name: 'InvalidSignatureException' });
    expect(fake.refused).toBe(1);
    await fake.close();
  });

  test('retries once on throttling or a 5xx, never more; other errors not at all', async () => {
    const answers: JsonAnswer[] = [];
    const fake = await startAwsJsonFake({ service: 'secretsmanager', targetPrefix: 'secretsmanager', region: 'eu-west-1', handlers: { Op: () => answers.shift() ?? { output: {} } } });
    answers.push({ status: 400, error: 'ThrottlingException', message: 'slow down' }, { output: { ok: true } });
    expect(await awsJsonCall(service(fake.url), 'Op', {})).toEqual({ ok: true });
    answers.push({ status: 500, error: 'InternalServiceError', message: 'oops' }, { status: 503, error: 'ServiceUnavailable', message: 'later' });
    await expect(awsJsonCall(service(fake.url), 'Op', {})).rejects.toMatchObject({ name: 'ServiceUnavailable', status: 503 });
    answers.push({ status: 400, error: 'ResourceNotFoundException', message: 'no' }, { output: { unreachable: true } });
    await expect(awsJsonCall(service(fake.url), 'Op', {})).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
    expect(fake.calls).toHaveLength(5);
    await fake.close();
  });

  test('an unreachable endpoint is a NetworkingError, after one retry', async () => {
    await expect(awsJsonCall(service('http://127.0.0.1:1'), 'Op', {})).rejects.toMatchObject({ name: 'NetworkingError', status: 0 });
  });
});

describe('awsEndpoint', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const name of ['AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_DYNAMODB']) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });

  test('as the SDK resolves it: the override, the per-service variable, the global one, the public endpoint', () => {
    delete process.env.AWS_ENDPOINT_URL;
    delete process.env.AWS_ENDPOINT_URL_DYNAMODB;
    expect(awsEndpoint('dynamodb', 'eu-west-3')).toBe('https://dynamodb.eu-west-3.amazonaws.com');
    process.env.AWS_ENDPOINT_URL = 'http://127.0.0.1:9/';
    expect(awsEndpoint('dynamodb', 'eu-west-3')).toBe('http://127.0.0.1:9');
    process.env.AWS_ENDPOINT_URL_DYNAMODB = 'http://127.0.0.1:8';
    expect(awsEndpoint('dynamodb', 'eu-west-3')).toBe('http://127.0.0.1:8');
    expect(awsEndpoint('dynamodb', 'eu-west-3', 'http://127.0.0.1:7')).toBe('http://127.0.0.1:7');
  });
});
