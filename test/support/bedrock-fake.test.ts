import { createHash } from 'node:crypto';
import AnthropicBedrock from '@anthropic-ai/bedrock-sdk';
import {
  AccessDeniedException,
  BedrockRuntimeClient,
  CountTokensCommand,
  InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
  ModelStreamErrorException,
  ServiceUnavailableException,
  ThrottlingException,
  ValidationException,
} from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { FAKE_CREDENTIALS, startBedrockFake, textEvents, type BedrockFake } from './bedrock-fake.ts';

/**
 * The Bedrock fake, proven against the official clients before anything of ours talks to it: what
 * they send it accepts (signatures included), what it answers they decode, and what Bedrock would
 * refuse it refuses. (The SDK's default HTTP/2 handler is swapped for its HTTP/1.1 one: same paths,
 * signatures and event stream.)
 */
let fake: BedrockFake;
let client: BedrockRuntimeClient;

const MODEL_IDS = ['anthropic.claude-sonnet-4-5-20250929-v1:0', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6'];
const body = JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });

beforeAll(async () => {
  fake = await startBedrockFake();
  client = new BedrockRuntimeClient({ endpoint: fake.url, region: 'us-east-1', credentials: FAKE_CREDENTIALS, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
});

afterAll(async () => {
  client.destroy();
  await fake.close();
});

test.each(MODEL_IDS)('InvokeModel and CountTokens from the AWS SDK, model %s: accepted, signature verified, model id decoded from one path segment', async (modelId) => {
  const invoked = await client.send(new InvokeModelCommand({ modelId, body, contentType: 'application/json', accept: 'application/json' }));
  expect(JSON.parse(new TextDecoder().decode(invoked.body))).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'Hello from the Bedrock fake.' }], stop_reason: 'end_turn', usage: { input_tokens: 12, output_tokens: 6 } });
  expect(fake.requests.at(-1)).toMatchObject({ action: 'invoke', modelId, rawPath: `/model/${encodeURIComponent(modelId)}/invoke` });
  const counted = await client.send(new CountTokensCommand({ modelId, input: { invokeModel: { body: new TextEncoder().encode(body) } } }));
  expect(counted.inputTokens).toBe(Math.ceil(body.length / 4));
});

test('the event stream decodes in the AWS SDK, at any chunking: each chunk is one Anthropic event', async () => {
  for (const seed of [undefined, 1, 2, 3]) {
    fake.chunking(seed);
    fake.script({ events: textEvents('Streamed.') });
    const answer = await client.send(new InvokeModelWithResponseStreamCommand({ modelId: MODEL_IDS[1], body, contentType: 'application/json' }));
    const events: Record<string, unknown>[] = [];
    for await (const part of answer.body ?? []) if (part.chunk?.bytes) events.push(JSON.parse(new TextDecoder().decode(part.chunk.bytes)));
    expect(events).toEqual(textEvents('Streamed.'));
  }
  fake.chunking(undefined);
});

test('an exception frame mid-stream surfaces as the SDK\'s typed exception', async () => {
  fake.script({ events: textEvents('Cut').slice(0, 3), exceptionAfter: { type: 'modelStreamErrorException', message: 'The model stream failed.' } });
  const answer = await client.send(new InvokeModelWithResponseStreamCommand({ modelId: MODEL_IDS[0], body, contentType: 'application/json' }));
  const seen: unknown[] = [];
  await expect(
    (async () => {
      for await (const part of answer.body ?? []) seen.push(part);
    })(),
  ).rejects.toBeInstanceOf(ModelStreamErrorException);
  expect(seen).toHaveLength(3);
});

test('dropAfter: every event reaches the SDK, then the connection drops instead of ending the stream', async () => {
  for (const seed of [undefined, 1]) {
    fake.chunking(seed);
    fake.script({ events: textEvents('Dropped').slice(0, 4), dropAfter: true });
    const answer = await client.send(new InvokeModelWithResponseStreamCommand({ modelId: MODEL_IDS[0], body, contentType: 'application/json' }));
    const events: Record<string, unknown>[] = [];
    const read = (async () => {
      for await (const part of answer.body ?? []) if (part.chunk?.bytes) events.push(JSON.parse(new TextDecoder().decode(part.chunk.bytes)));
    })();
    await expect(read).rejects.toThrow();
    expect(events).toEqual(textEvents('Dropped').slice(0, 4));
  }
  fake.chunking(undefined);
});

test('a corrupt CRC is rejected by the SDK\'s decoder', async () => {
  fake.script({ events: textEvents('Broken'), corruptAfter: 2 });
  const answer = await client.send(new InvokeModelWithResponseStreamCommand({ modelId: MODEL_IDS[0], body, contentType: 'application/json' }));
  await expect(
    (async () => {
      for await (const _part of answer.body ?? []);
    })(),
  ).rejects.toThrow(/checksum|CRC/i);
});

test.each([
  ['ThrottlingException', 429, ThrottlingException],
  ['ValidationException', 400, ValidationException],
  ['AccessDeniedException', 403, AccessDeniedException],
  ['ServiceUnavailableException', 503, ServiceUnavailableException],
] as const)('a %s answer is the SDK\'s typed error with status %i', async (type, status, ErrorClass) => {
  fake.script({ error: { type, status, message: `fake ${type}` } });
  const error = await client.send(new InvokeModelCommand({ modelId: MODEL_IDS[0], body })).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(ErrorClass);
  expect(error).toMatchObject({ message: `fake ${type}`, $metadata: { httpStatusCode: status } });
});

test('Anthropic\'s Bedrock SDK: messages.create streamed and not, through its stream helper, with every model id form', async () => {
  const anthropic = new AnthropicBedrock({ baseURL: fake.url, awsRegion: 'us-east-1', awsAccessKey: FAKE_CREDENTIALS.accessKeyId, awsSecretKey: FAKE_CREDENTIALS.secretAccessKey, awsSessionToken: FAKE_CREDENTIALS.sessionToken, maxRetries: 0 });
  for (const model of MODEL_IDS) {
    const message = await anthropic.messages.create({ model, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from the Bedrock fake.' }]);
    // The SDK puts its anthropic-version header value in the body (AWS documents bedrock-2023-05-31).
    expect(fake.requests.at(-1)).toMatchObject({ action: 'invoke', modelId: model, body: { anthropic_version: expect.any(String) } });
    expect(fake.requests.at(-1)?.body).not.toHaveProperty('model');
    expect(fake.requests.at(-1)?.body).not.toHaveProperty('stream');
    fake.script({ events: textEvents('Via the helper.') });
    const streamed = await anthropic.messages.stream({ model, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    expect(streamed.content).toEqual([{ type: 'text', text: 'Via the helper.' }]);
    expect(fake.requests.at(-1)).toMatchObject({ action: 'invoke-with-response-stream', modelId: model });
  }
});

test('what Bedrock would refuse is refused: no signature, a wrong secret, an altered body, an altered path, another region', async () => {
  const unsigned = await fetch(`${fake.url}/model/x/invoke`, { method: 'POST', body });
  expect(unsigned.status).toBe(403);
  const wrongSecret = new BedrockRuntimeClient({ endpoint: fake.url, region: 'us-east-1', credentials: { ...FAKE_CREDENTIALS, secretAccessKey: 'not-the-secret' }, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
  await expect(wrongSecret.send(new InvokeModelCommand({ modelId: MODEL_IDS[0], body }))).rejects.toMatchObject({ name: 'InvalidSignatureException', $metadata: { httpStatusCode: 403 } });
  const otherRegion = new BedrockRuntimeClient({ endpoint: fake.url, region: 'eu-west-1', credentials: FAKE_CREDENTIALS, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
  await expect(otherRegion.send(new InvokeModelCommand({ modelId: MODEL_IDS[0], body }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 403 } });

  // Replay a valid request with one thing changed.
  const captured: { url: string; headers: Record<string, string>; body: string }[] = [];
  const recording = new BedrockRuntimeClient({ endpoint: fake.url, region: 'us-east-1', credentials: FAKE_CREDENTIALS, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
  recording.middlewareStack.add((next) => async (args) => {
    const request = args.request as { path: string; headers: Record<string, string>; body: string };
    captured.push({ url: request.path, headers: { ...request.headers }, body: String(request.body) });
    return next(args);
  }, { step: 'finalizeRequest', priority: 'low' });
  await recording.send(new InvokeModelCommand({ modelId: MODEL_IDS[0], body, contentType: 'application/json', accept: 'application/json' }));
  const { url, headers } = captured[0]!;
  const replay = (path: string, payload: string, extra: Record<string, string> = {}) => fetch(`${fake.url}${path}`, { method: 'POST', headers: { ...headers, ...extra }, body: payload }).then((response) => response.status);
  const altered = body.replace('hi', 'ho');
  expect(await replay(url, body)).toBe(200);
  expect(await replay(url, altered, { 'x-amz-content-sha256': createHash('sha256').update(altered).digest('hex') })).toBe(403);
  expect(await replay(url, altered)).toBe(400);
  expect(await replay(url.replace('v1%3A0', 'v2%3A0'), body)).toBe(403);
  wrongSecret.destroy();
  otherRegion.destroy();
  recording.destroy();
});

test('a Bedrock API key from the AWS SDK (bearer auth instead of SigV4) is taken; an unknown one refused', async () => {
  const keyed = await startBedrockFake({ apiKeys: ['ABSKZmFrZS1iZWRyb2NrLWFwaS1rZXk='] });
  const withKey = (token: string) => new BedrockRuntimeClient({ endpoint: keyed.url, region: 'us-east-1', token: { token }, authSchemePreference: ['httpBearerAuth'], maxAttempts: 1, requestHandler: new NodeHttpHandler() });
  const good = withKey('ABSKZmFrZS1iZWRyb2NrLWFwaS1rZXk=');
  const bad = withKey('ABSKbm90LXRoZS1rZXk=');
  try {
    await good.send(new InvokeModelCommand({ modelId: MODEL_IDS[1], body }));
    expect(keyed.requests.at(-1)?.headers.authorization).toBe('Bearer ABSKZmFrZS1iZWRyb2NrLWFwaS1rZXk=');
    await expect(bad.send(new InvokeModelCommand({ modelId: MODEL_IDS[1], body }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 403 } });
  } finally {
    good.destroy();
    bad.destroy();
    await keyed.close();
  }
});

test('an InvokeModel body Bedrock would refuse is refused: no anthropic_version, or model or stream in the body (also inside CountTokens)', async () => {
  const refused = async (modelBody: Record<string, unknown>, count = false) => {
    const error = count
      ? await client.send(new CountTokensCommand({ modelId: MODEL_IDS[0], input: { invokeModel: { body: new TextEncoder().encode(JSON.stringify(modelBody)) } } })).catch((caught: unknown) => caught)
      : await client.send(new InvokeModelCommand({ modelId: MODEL_IDS[0], body: JSON.stringify(modelBody) })).catch((caught: unknown) => caught);
    return error instanceof ValidationException ? error.message : `not refused: ${JSON.stringify(error)}`;
  };
  const valid = JSON.parse(body) as Record<string, unknown>;
  expect(await refused({ ...valid, anthropic_version: undefined })).toMatch(/required key \[anthropic_version\]/);
  expect(await refused({ ...valid, model: 'claude-sonnet-5' })).toBe('extraneous key [model] is not permitted');
  expect(await refused({ ...valid, stream: true })).toBe('extraneous key [stream] is not permitted');
  expect(await refused({ ...valid, model: 'claude-sonnet-5' }, true)).toBe('extraneous key [model] is not permitted');
});
