import { signAwsRequest } from '../../../lambda/aws/signer.ts';
import { FAKE_CREDENTIALS, startBedrockFake, type BedrockFake } from '../../support/bedrock-fake.ts';

/** Our SigV4 against the Bedrock fake's own verification (itself proven against the AWS SDK). */
let fake: BedrockFake;
beforeAll(async () => {
  // Also the credentials the test environment exports, for the default credential chain.
  fake = await startBedrockFake({ credentials: [FAKE_CREDENTIALS, { accessKeyId: 'test', secretAccessKey: 'test' }] });
});
afterAll(() => fake.close());

const body = JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });

async function send(modelId: string, credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }) {
  const url = `${fake.url}/model/${encodeURIComponent(modelId)}/invoke`;
  const headers = { 'content-type': 'application/json', accept: 'application/json' };
  const signed = await signAwsRequest({ service: 'bedrock', region: 'us-east-1' }, { method: 'POST', url, headers, body }, credentials);
  return fetch(url, { method: 'POST', headers: signed, body });
}

test.each(['anthropic.claude-haiku-4-5-20251001-v1:0', 'global.anthropic.claude-sonnet-5-v1:0', 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc/def'])('a request for %s is accepted, with and without a session token', async (modelId) => {
  expect((await send(modelId, FAKE_CREDENTIALS)).status).toBe(200);
  const { sessionToken: _token, ...longTerm } = FAKE_CREDENTIALS;
  expect((await send(modelId, longTerm)).status).toBe(200);
  expect(fake.requests.at(-1)?.modelId).toBe(modelId);
});

test('the default credential chain signs with what the environment holds; a wrong secret is refused', async () => {
  expect((await send('anthropic.claude-haiku-4-5-20251001-v1:0')).status).toBe(200);
  const refused = await send('anthropic.claude-haiku-4-5-20251001-v1:0', { ...FAKE_CREDENTIALS, secretAccessKey: 'wrong' });
  expect(refused.status).toBe(403);
  expect(refused.headers.get('x-amzn-errortype')).toMatch(/^InvalidSignatureException/);
});

describe('the same headers as the AWS SDK signer (@smithy/signature-v4), byte for byte', () => {
  const when = new Date('2026-11-25T13:04:05.678Z');
  const sessionCredentials = { accessKeyId: 'ASIAEXAMPLE000000001', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', sessionToken: 'FwoGZXIvYXdzEXAMPLE//token+with/odd=chars' };
  const { sessionToken: _token, ...longTermCredentials } = sessionCredentials;

  async function sdkHeaders(target: { service: string; region: string }, request: { method: string; url: string; headers: Record<string, string>; body: string }, credentials: typeof longTermCredentials) {
    const { SignatureV4 } = await import('@smithy/signature-v4');
    const { Sha256 } = await import('@smithy/core/checksum');
    const url = new URL(request.url);
    const signer = new SignatureV4({ service: target.service, region: target.region, sha256: Sha256, credentials });
    const signed = await signer.sign(
      { method: request.method, protocol: url.protocol, hostname: url.hostname, ...(url.port ? { port: Number(url.port) } : {}), path: url.pathname, query: Object.fromEntries(url.searchParams), headers: { ...request.headers, host: url.host }, body: request.body },
      { signingDate: when },
    );
    return signed.headers;
  }

  const cases: [string, { service: string; region: string }, { method: string; url: string; headers: Record<string, string>; body: string }][] = [
    ['a DynamoDB JSON call', { service: 'dynamodb', region: 'eu-west-1' }, { method: 'POST', url: 'https://dynamodb.eu-west-1.amazonaws.com/', headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.GetItem' }, body: '{"TableName":"keys","Key":{"keyHash":{"S":"abc"}}}' }],
    ['a Secrets Manager call on a local endpoint with a port', { service: 'secretsmanager', region: 'us-east-1' }, { method: 'POST', url: 'http://127.0.0.1:4566/', headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'secretsmanager.GetSecretValue' }, body: '{"SecretId":"gateway/upstreams"}' }],
    ['a Bedrock model ARN as one encoded segment', { service: 'bedrock', region: 'us-west-2' }, { method: 'POST', url: `https://bedrock-runtime.us-west-2.amazonaws.com/model/${encodeURIComponent('arn:aws:bedrock:us-west-2:123456789012:application-inference-profile/a b(c)')}/invoke-with-response-stream`, headers: { 'content-type': 'application/json', accept: 'application/vnd.amazon.eventstream' }, body: '{"messages":[{"role":"user","content":"héllo"}]}' }],
    ['forwarded client headers, unsignable ones, odd spacing and a query', { service: 'bedrock', region: 'us-east-1' }, { method: 'POST', url: 'https://bedrock-mantle.us-east-1.api.aws/v1/responses?b=2&a=x%20y&a=last&z=*', headers: { 'Content-Type': 'application/json', 'User-Agent': 'codex/1.0', 'X-Stainless-Lang': '  js \t  x ', 'proxy-thing': '1', 'sec-fetch-mode': 'cors', 'x-amzn-trace-id': 'Root=1', Date: 'yesterday', Authorization: 'Bearer stale' }, body: '' }],
    ['a caller-given payload hash', { service: 's3', region: 'us-east-1' }, { method: 'GET', url: 'https://example.s3.amazonaws.com/a/./b/../c/', headers: { 'X-Amz-Content-Sha256': 'UNSIGNED-PAYLOAD' }, body: 'ignored' }],
  ];

  test.each(cases)('%s, with and without a session token', async (_name, target, request) => {
    for (const credentials of [sessionCredentials, longTermCredentials]) {
      const ours = await signAwsRequest(target, request, credentials, when);
      expect(ours).toEqual(await sdkHeaders(target, request, credentials));
    }
  });

  test('the same header names again with other values (each layout and canonical value is kept between signatures), and names that differ only in case', async () => {
    const target = { service: 'bedrock', region: 'us-east-1' };
    const url = 'https://bedrock-runtime.us-east-1.amazonaws.com/model/m/invoke';
    const values = ['  js \t  x ', 'plain', 'a\r\nb', 'plain', '  js \t  x '];
    for (const [i, value] of values.entries()) {
      const request = { method: 'POST', url, headers: { 'content-type': 'application/json', 'x-stainless-lang': value }, body: `{"n":${i}}` };
      const credentials = i % 2 === 0 ? sessionCredentials : { ...sessionCredentials, sessionToken: `${sessionCredentials.sessionToken}  ${i}` };
      expect(await signAwsRequest(target, request, credentials, when)).toEqual(await sdkHeaders(target, request, credentials));
    }
    const twice = { method: 'POST', url, headers: { 'Content-Type': 'text/plain', 'content-type': 'application/json', 'X-Custom': 'B', 'x-custom': 'a' }, body: '{}' };
    expect(await signAwsRequest(target, twice, sessionCredentials, when)).toEqual(await sdkHeaders(target, twice, sessionCredentials));
  });
});
