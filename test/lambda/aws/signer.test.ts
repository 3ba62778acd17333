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
