import { startGateway, type Harness } from '../support/gateway-harness.ts';
import { sendJson, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';

/** The smaller endpoints the agents call: Codex's token count and remote compaction, Claude Code's probe. */
let oai: UpstreamStub;
let ant: UpstreamStub;
let gateway: Harness;
let key: string;

beforeAll(async () => {
  [oai, ant] = await Promise.all([startUpstream(), startUpstream()]);
  gateway = await startGateway({
    config: {
      upstreams: { oai: { type: 'openai', baseUrl: `${oai.url}/v1` }, ant: { type: 'anthropic', baseUrl: ant.url }, sim: { type: 'simulator' } },
      routes: [
        { model: 'team-fast', upstream: 'oai', upstreamModel: 'gpt-5.5' },
        { model: 'gpt-*', upstream: 'oai' },
        { model: 'claude-*', upstream: 'ant' },
        { model: '*', upstream: 'sim' },
      ],
    },
  });
  ({ key } = await gateway.issueKey());
});

afterAll(async () => {
  await gateway.close();
  await Promise.all([oai.close(), ant.close()]);
});

const post = (path: string, body: unknown) =>
  fetch(`${gateway.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

test('input_tokens and compact pass through to an OpenAI upstream, body untouched but for a route rename', async () => {
  oai.reply(sendJson(200, { object: 'response.input_tokens', input_tokens: 1234 }));
  const counted = await post('/second/v1/responses/input_tokens', { model: 'gpt-5.5', input: [{ role: 'user', content: 'hi' }], tools: [] });
  expect(await counted.json()).toEqual({ object: 'response.input_tokens', input_tokens: 1234 });
  expect(oai.requests.at(-1)).toMatchObject({ method: 'POST', url: '/v1/responses/input_tokens', body: '{"model":"gpt-5.5","input":[{"role":"user","content":"hi"}],"tools":[]}' });

  const compaction = { id: 'cmp_1', object: 'response.compaction', output: [{ type: 'compaction', encrypted_content: 'abc' }], usage: { input_tokens: 900, output_tokens: 40, input_tokens_details: { cached_tokens: 0 } } };
  oai.reply(sendJson(200, compaction));
  const compacted = await post('/second/v1/responses/compact', { model: 'team-fast', input: 'long history' });
  expect(await compacted.json()).toEqual(compaction);
  expect(oai.requests.at(-1)).toMatchObject({ url: '/v1/responses/compact', body: '{"model":"gpt-5.5","input":"long history"}' });
});

test('compaction costs tokens: it is metered like a turn', async () => {
  const { key: metered, id } = await gateway.issueKey();
  oai.reply(sendJson(200, { id: 'cmp_2', object: 'response.compaction', output: [], usage: { input_tokens: 500, output_tokens: 20 } }));
  const response = await fetch(`${gateway.url}/second/v1/responses/compact`, { method: 'POST', headers: { authorization: `Bearer ${metered}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-5.5', input: 'x' }) });
  expect(response.status).toBe(200);
  await response.text();
  for (const until = Date.now() + 3_000; Date.now() < until; ) {
    const days = await gateway.usage.days(id, '2000-01-01');
    if (days.length > 0) {
      expect(days[0]).toMatchObject({ requests: 1, inputTokens: 500, outputTokens: 20 });
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('compaction was not metered');
});

test('elsewhere input_tokens is a local estimate and compact a 501, both in the Responses format', async () => {
  const before = ant.requests.length;
  const estimate = await post('/second/v1/responses/input_tokens', { model: 'claude-sonnet-5', input: 'abcdefghi' });
  expect(estimate.status).toBe(200);
  expect(estimate.headers.get('x-token-count')).toBe('estimated');
  expect(await estimate.json()).toEqual({ object: 'response.input_tokens', input_tokens: 3 });
  const compact = await post('/second/v1/responses/compact', { model: 'claude-sonnet-5', input: 'x' });
  expect(compact.status).toBe(501);
  expect(((await compact.json()) as { error: unknown }).error).toMatchObject({ type: 'invalid_request_error', code: 'not_implemented' });
  expect(ant.requests.length).toBe(before);
  const simulated = await post('/second/v1/responses/input_tokens', { model: 'local-model', input: 'abc' });
  expect(await simulated.json()).toEqual({ object: 'response.input_tokens', input_tokens: 1 });
});

test('Claude Code\'s start-up probe HEAD /api/hello is answered without a key', async () => {
  for (const path of ['/first/api/hello', '/first/v1/api/hello']) {
    const response = await fetch(`${gateway.url}${path}`, { method: 'HEAD' });
    expect(response.status).toBe(200);
  }
});
