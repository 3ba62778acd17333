import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startGateway, type Harness } from '../support/gateway-harness.ts';
import { verifySignature } from '../support/sigv4-verify.ts';
import { fixture, sendJson, sendSse, startUpstream, type RecordedRequest, type StubHandler, type UpstreamStub } from '../support/upstream-stub.ts';

/**
 * Any upstream may be signed with SigV4 instead of keyed (`"aws": {"service", "region"}`): Bedrock's
 * OpenAI-compatible and Anthropic-native endpoints on bedrock-mantle, passthrough. The stub here
 * stands in for bedrock-mantle and refuses any request whose signature does not verify for service
 * `bedrock-mantle` in us-east-1 with the test environment's credentials (test/test).
 */
const SECRETS = new Map([['test', 'test']]);
let mantle: UpstreamStub;
let gateway: Harness;
let key: string;
let refused: string[];

/** Answers as `next` when the signature verifies, else as bedrock-mantle refuses it. */
function signedOnly(next: StubHandler): StubHandler {
  return (request: RecordedRequest, res) => {
    const problem = verifySignature(request, Buffer.from(request.body), SECRETS, { service: 'bedrock-mantle', region: 'us-east-1' });
    if (!problem) return next(request, res);
    refused.push(problem.type);
    return sendJson(problem.status, { message: problem.message })(request, res);
  };
}

beforeAll(async () => {
  mantle = await startUpstream();
  gateway = await startGateway({
    config: {
      upstreams: {
        'mantle-openai': { type: 'openai', baseUrl: `${mantle.url}/v1`, aws: { service: 'bedrock-mantle', region: 'us-east-1' } },
        'mantle-anthropic': { type: 'anthropic', baseUrl: `${mantle.url}/anthropic`, aws: { service: 'bedrock-mantle', region: 'us-east-1' } },
        'mantle-wrong-region': { type: 'openai', baseUrl: `${mantle.url}/v1`, aws: { service: 'bedrock-mantle', region: 'eu-west-1' } },
      },
      routes: [
        { model: 'openai.gpt-oss-120b', upstream: 'mantle-openai' },
        { model: 'anthropic.claude-sonnet-5', upstream: 'mantle-anthropic' },
        { model: 'wrong-region', upstream: 'mantle-wrong-region' },
      ],
    },
  });
  ({ key } = await gateway.issueKey());
});

beforeEach(() => {
  refused = [];
});

afterAll(async () => {
  await gateway.close();
  await mantle.close();
});

test('an openai upstream with "aws" is signed for its service: Responses passed through, streamed and not, no key sent', async () => {
  const openai = new OpenAI({ baseURL: `${gateway.url}/second/v1`, apiKey: key, maxRetries: 0 });
  mantle.reply(signedOnly(sendJson(200, fixture('openai/text.json'))));
  // A client's organization or project header would select a Mantle project of the operator's account: neither is sent, nor signed.
  const plain = await openai.responses.create({ model: 'openai.gpt-oss-120b', input: 'hi' }, { headers: { 'openai-organization': 'org-attacker', 'openai-project': 'proj_attacker' } });
  expect(plain.output_text.length).toBeGreaterThan(0);
  const sent = mantle.requests.at(-1) as RecordedRequest;
  expect([sent.headers['openai-organization'], sent.headers['openai-project']]).toEqual([undefined, undefined]);
  expect(sent.headers.authorization).not.toMatch(/openai-(organization|project)/);
  expect(sent.url).toBe('/v1/responses');
  expect(sent.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=test\/\d{8}\/us-east-1\/bedrock-mantle\/aws4_request/);
  expect(sent.body).not.toContain(key);
  mantle.reply(signedOnly(sendSse(fixture('openai/text-stream.sse'))));
  const events: string[] = [];
  for await (const event of await openai.responses.create({ model: 'openai.gpt-oss-120b', input: 'hi', stream: true })) events.push(event.type);
  expect(events.at(-1)).toBe('response.completed');
  expect(refused).toEqual([]);
});

test('an anthropic upstream with "aws" (Messages on bedrock-mantle) is signed; the body reaches it byte for byte', async () => {
  const anthropic = new Anthropic({ baseURL: `${gateway.url}/first`, apiKey: key, maxRetries: 0 });
  mantle.reply(signedOnly(sendSse(fixture('anthropic/text-stream.sse'))));
  const body = { model: 'anthropic.claude-sonnet-5', max_tokens: 30, system: [{ type: 'text' as const, text: 'Be brief.', cache_control: { type: 'ephemeral' as const } }], messages: [{ role: 'user' as const, content: 'hi' }] };
  const message = await anthropic.messages.stream(body).finalMessage();
  expect(message.content[0]?.type).toBe('text');
  const sent = mantle.requests.at(-1) as RecordedRequest;
  expect(sent.url).toBe('/anthropic/v1/messages');
  expect(sent.headers['x-api-key']).toBeUndefined();
  // The client's own version header is forwarded (the SDK sends its current one).
  expect(sent.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  expect(JSON.parse(sent.body)).toEqual({ ...body, stream: true });
  expect(refused).toEqual([]);
});

test('Messages on bedrock-mantle: request tags (the member and its beta) are left out before signing, and said so', async () => {
  mantle.reply(signedOnly(sendJson(200, fixture('anthropic/text.json'))));
  const response = await fetch(`${gateway.url}/first/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'anthropic-beta': 'request-tags-2026-08-21' },
    body: JSON.stringify({ model: 'anthropic.claude-sonnet-5', max_tokens: 30, tags: { team: 'ml' }, messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('x-gateway-dropped')).toBe('tags, anthropic-beta request-tags-2026-08-21');
  const sent = mantle.requests.at(-1) as RecordedRequest;
  expect(JSON.parse(sent.body)).toEqual({ model: 'anthropic.claude-sonnet-5', max_tokens: 30, messages: [{ role: 'user', content: 'hi' }] });
  expect(sent.headers['anthropic-beta']).toBeUndefined();
  expect(refused).toEqual([]);
});

test('a signature the service refuses reaches the client as the service\'s 403, with no credential in it', async () => {
  const openai = new OpenAI({ baseURL: `${gateway.url}/second/v1`, apiKey: key, maxRetries: 0 });
  mantle.reply(signedOnly(sendJson(200, fixture('openai/text.json'))));
  const failure = await openai.responses.create({ model: 'wrong-region', input: 'hi' }).catch((error: unknown) => error);
  expect(refused).toEqual(['InvalidSignatureException']);
  expect(failure).toBeInstanceOf(OpenAI.APIError);
  const error = failure as InstanceType<typeof OpenAI.APIError>;
  // Same format: the service's own refusal is relayed as it came (bedrock-mantle answers OpenAI's error shape).
  expect(error.status).toBe(403);
  expect(error.message).toContain('Credential should be scoped');
  expect(JSON.stringify(error.error)).not.toMatch(/AWS4-HMAC|test\/\d{8}/);
});
