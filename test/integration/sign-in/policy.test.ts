import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { IdentityOperations } from '../../../lambda/identity/operators.ts';
import { localDynamo } from '../../../bin/local/embedded-store.ts';
import { logOf } from '../../support/gateway-harness.ts';
import { signIn } from '../../support/sign-in.ts';
import { ALICE, BOB, startSignInGateway, type SignInSetup } from '../../support/sign-in-gateway.ts';

/**
 * Models per person and group, through the real gateway signing in against the test IdP: Alice
 * (engineering) gets the base policy, Bob (contractors) the contractors' entry. Every route that
 * names a model refuses a model outside the person's globs in its client's format, and the model
 * lists show only what the caller may use.
 */
let setup: SignInSetup;
let alice: string;
let bob: string;

beforeAll(async () => {
  setup = await startSignInGateway({
    routes: [
      { model: 'claude-sonnet-5', upstream: 'sim' },
      { model: 'claude-haiku-4-5', upstream: 'sim' },
      { model: 'gpt-5.5', upstream: 'sim' },
      { model: 'mistral-large', upstream: 'sim', allowUnpriced: true },
    ],
    identity: {
      policies: [
        { groups: ['contractors'], models: ['claude-haiku-*'] },
        { models: ['claude-*', 'gpt-5*'] },
      ],
    },
  });
  alice = (await signIn(setup.gateway.url, ALICE)).access_token as string;
  bob = (await signIn(setup.gateway.url, BOB)).access_token as string;
});

afterAll(() => setup.close());

const anthropic = (token: string) => new Anthropic({ baseURL: `${setup.gateway.url}/first`, authToken: token, apiKey: null, maxRetries: 0 });
const openai = (token: string) => new OpenAI({ baseURL: `${setup.gateway.url}/second/v1`, apiKey: token, maxRetries: 0 });

async function post(path: string, token: string, body: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const response = await fetch(`${setup.gateway.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, headers: response.headers };
}

const messages = (model: string) => ({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
const responses = (model: string) => ({ model, input: 'hi' });

describe('allowed and denied models, on every route that names one', () => {
  test('Messages: allowed passes; denied is 400 invalid_request_error before anything goes upstream, as the SDK reports it', async () => {
    expect((await anthropic(alice).messages.create(messages('claude-sonnet-5') as Anthropic.MessageCreateParamsNonStreaming)).type).toBe('message');
    const error = await anthropic(alice).messages.create(messages('mistral-large') as Anthropic.MessageCreateParamsNonStreaming).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('"mistral-large" is not allowed for you') } });
    // The contractors' entry replaces the base list: Sonnet is refused to Bob, Haiku allowed.
    expect((await post('/first/v1/messages', bob, messages('claude-sonnet-5'))).status).toBe(400);
    expect((await post('/first/v1/messages', bob, messages('claude-haiku-4-5'))).status).toBe(200);
  });

  test('count_tokens, Responses, input_tokens and compact: the same refusal in each format', async () => {
    const count = await post('/first/v1/messages/count_tokens', bob, { model: 'claude-sonnet-5', messages: [{ role: 'user', content: 'hi' }] });
    expect(count.status).toBe(400);
    expect(count.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(await logOf(setup.gateway, count.headers.get('request-id'))).toMatchObject({ status: 400, sub: 'bob', outcome: 'invalid_request' });
    expect((await post('/first/v1/messages/count_tokens', bob, { model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);

    const error = await openai(bob).responses.create(responses('gpt-5.5') as OpenAI.Responses.ResponseCreateParamsNonStreaming).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('model_not_found');
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('model');
    expect((await openai(alice).responses.create(responses('gpt-5.5') as OpenAI.Responses.ResponseCreateParamsNonStreaming)).status).toBe('completed');
    for (const path of ['/second/v1/responses/input_tokens', '/second/v1/responses/compact']) {
      const refused = await post(path, alice, responses('mistral-large'));
      expect([path, refused.status, (refused.body.error as Record<string, unknown>).code]).toEqual([path, 400, 'model_not_found']);
    }
    expect((await post('/second/v1/responses/input_tokens', alice, responses('gpt-5.5'))).status).toBe(200);
  });

  test('no upstream call and no charge for a refused model', async () => {
    const refused = await post('/first/v1/messages', bob, messages('claude-sonnet-5'));
    const line = await logOf(setup.gateway, refused.headers.get('request-id'));
    expect(line).toMatchObject({ status: 400 });
    expect(line.upstream).toBeUndefined();
  });
});

describe('model lists show only what the caller may use', () => {
  const ids = async (path: string, token: string) => {
    const response = await fetch(`${setup.gateway.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await response.json()) as { data?: { id: string }[]; models?: { slug: string }[] };
    return (body.data?.map((model) => model.id) ?? body.models?.map((model) => model.slug) ?? []).sort();
  };

  test('both formats, the SDKs and Codex catalog alike', async () => {
    expect(await ids('/first/v1/models', alice)).toEqual(['claude-haiku-4-5', 'claude-sonnet-5', 'gpt-5.5']);
    expect(await ids('/first/v1/models', bob)).toEqual(['claude-haiku-4-5']);
    const listed = [];
    for await (const model of openai(bob).models.list()) listed.push(model.id);
    expect(listed).toEqual(['claude-haiku-4-5']);
    expect(await ids('/second/v1/models?client_version=0.171.0', alice)).toEqual(['claude-haiku-4-5', 'claude-sonnet-5', 'gpt-5.5']);
    expect(await ids('/second/v1/models?client_version=0.171.0', bob)).toEqual(['claude-haiku-4-5']);
    // No bearer, no catalog: the 401 in OpenAI's format, no model named.
    const stranger = await fetch(`${setup.gateway.url}/second/v1/models?client_version=0.171.0`);
    const refusal = await stranger.text();
    expect([stranger.status, JSON.parse(refusal).error.code]).toEqual([401, 'invalid_api_key']);
    expect(refusal).not.toContain('claude-haiku');
  });

  test("a model their policy allows but no route serves: the 404 lists only the routed models they may use", async () => {
    const refused = await post('/first/v1/messages', alice, messages('claude-opus-9'));
    expect([refused.status, refused.body.error]).toEqual([404, { type: 'not_found_error', message: 'No route for model "claude-opus-9". Routed models: claude-sonnet-5, claude-haiku-4-5, gpt-5.5.' }]);
    expect(((await post('/first/v1/messages', bob, messages('claude-haiku-9'))).body.error as { message: string }).message).toBe('No route for model "claude-haiku-9". Routed models: claude-haiku-4-5.');
  });
});

describe('keys tied to a person', () => {
  test("the key's allowlist and the person's policy both apply (their intersection); a plain key has no person policy", async () => {
    const identity = new IdentityOperations(setup.gateway.storeInfo.identityTable, localDynamo(setup.gateway.storeInfo.endpoint));
    expect(await identity.find('bob')).toBeDefined();
    const { key: bobKey } = await setup.gateway.issueKey({ owner: 'bob', models: ['claude-*'] });
    expect((await post('/first/v1/messages', bobKey, messages('claude-sonnet-5'))).body).toMatchObject({ error: { type: 'invalid_request_error' } });
    expect((await post('/first/v1/messages', bobKey, messages('claude-haiku-4-5'))).status).toBe(200);
    const { key: aliceKey } = await setup.gateway.issueKey({ owner: 'alice', models: ['claude-haiku-*'] });
    expect((await post('/first/v1/messages', aliceKey, messages('claude-sonnet-5'))).body).toMatchObject({ error: { type: 'permission_error' } });
    expect((await post('/second/v1/responses', aliceKey, responses('gpt-5.5'))).status).toBe(403);
    const listed = await fetch(`${setup.gateway.url}/first/v1/models`, { headers: { authorization: `Bearer ${aliceKey}` } });
    expect(((await listed.json()) as { data: { id: string }[] }).data.map((model) => model.id)).toEqual(['claude-haiku-4-5']);
    const { key: plain } = await setup.gateway.issueKey();
    expect((await post('/first/v1/messages', plain, messages('mistral-large'))).status).toBe(200);
  });
});
