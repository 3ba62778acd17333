import { logOf, startGateway, type Harness } from '../support/gateway-harness.ts';
import { fixture, sendJson, sendSse, startUpstream, type StubHandler, type UpstreamStub } from '../support/upstream-stub.ts';

/**
 * Issue 19, items 5 and 10: everything a request can cost is priced or refused before it goes
 * upstream. Premium tiers (OpenAI's Fast mode, Anthropic's fast mode) are refused unless the
 * route allows them, and billed at their published multiplier when it does; server-tool calls
 * at their per-call price; `background` is refused; a model name without a known price on a
 * route that passes names through is refused unless the route allows it or the config prices it.
 * Costs are read from the log line of each request (what was metered), in micro-dollars.
 */
let anthropicApi: UpstreamStub;
let openaiApi: UpstreamStub;
let gateway: Harness;
let key: string;

beforeAll(async () => {
  anthropicApi = await startUpstream();
  openaiApi = await startUpstream();
  gateway = await startGateway({
    config: {
      upstreams: {
        ant: { type: 'anthropic', baseUrl: anthropicApi.url },
        oai: { type: 'openai', baseUrl: `${openaiApi.url}/v1` },
        sim: { type: 'simulator' },
      },
      routes: [
        { model: 'claude-opus-4-8', upstream: 'ant', serviceTiers: ['fast'] },
        { model: 'gpt-5.5', upstream: 'oai', serviceTiers: ['priority'] },
        { model: 'team-*', upstream: 'ant', allowUnpriced: true },
        { model: 'priced-*', upstream: 'ant' },
        { model: 'claude-*', upstream: 'ant' },
        { model: 'o*', upstream: 'oai' },
        { model: 'gpt-*', upstream: 'oai' },
        { model: '*', upstream: 'sim' },
      ],
      prices: { 'priced-*': { inputPerMTok: 1, outputPerMTok: 2 } },
    },
  });
  ({ key } = await gateway.issueKey());
});

afterAll(async () => {
  await gateway.close();
  await Promise.all([anthropicApi.close(), openaiApi.close()]);
});

async function post(path: string, body: Record<string, unknown>): Promise<{ status: number; body: any; requestId: string | null }> {
  const response = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text.startsWith('{') ? JSON.parse(text) : text, requestId: response.headers.get('request-id') };
}

const messages = (model: string, extra: Record<string, unknown> = {}) => post('/first/v1/messages', { model, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], ...extra });
const responses = (model: string, extra: Record<string, unknown> = {}) => post('/second/v1/responses', { model, input: 'hi', ...extra });

/** What the request was metered at, in micro-dollars. */
async function costOf(requestId: string | null): Promise<number> {
  return Math.round(((await logOf(gateway, requestId)).costUsd as number) * 1e6);
}

/** An Anthropic answer with this usage. */
const anthropicAnswer = (usage: Record<string, unknown>): StubHandler => sendJson(200, { ...JSON.parse(fixture('anthropic/text.json')), usage: { input_tokens: 1000, output_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...usage } });

/** An OpenAI Responses answer with this usage, served at `tier`, with these output items before its message. */
function openaiAnswer(tier: string, items: unknown[] = []): StubHandler {
  const answer = JSON.parse(fixture('openai/text.json'));
  return sendJson(200, { ...answer, service_tier: tier, output: [...items, ...answer.output], usage: { input_tokens: 1000, output_tokens: 100, total_tokens: 1100, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } });
}

describe('premium processing tiers (item 5)', () => {
  test('refused where the route does not allow them, in each format, before the upstream is called', async () => {
    const sent = anthropicApi.requests.length + openaiApi.requests.length;
    const fast = await messages('claude-sonnet-5', { speed: 'fast' });
    expect({ status: fast.status, type: fast.body.error.type }).toEqual({ status: 400, type: 'invalid_request_error' });
    expect(fast.body.error.message).toContain('speed "fast"');
    for (const tier of ['priority', 'fast', 'ultrafast']) {
      const refused = await responses('gpt-5.4', { service_tier: tier });
      expect({ status: refused.status, param: refused.body.error.param }).toEqual({ status: 400, param: 'service_tier' });
    }
    // Standard and cheaper tiers pass.
    openaiApi.reply(openaiAnswer('default'));
    expect((await responses('gpt-5.4', { service_tier: 'auto' })).status).toBe(200);
    expect((await responses('gpt-5.4', { service_tier: 'flex' })).status).toBe(200);
    expect(anthropicApi.requests.length + openaiApi.requests.length).toBe(sent + 2);
  });

  test("allowed on a route, a tier is billed at the provider's multiplier of every token price, as the response reports it", async () => {
    // gpt-5.5: $5 / $30 per million standard; Fast mode (priority) 2.5x.
    openaiApi.reply(openaiAnswer('priority'));
    const priority = await responses('gpt-5.5', { service_tier: 'fast' });
    expect(priority.status).toBe(200);
    expect(await costOf(priority.requestId)).toBe(Math.round((1000 * 5 + 100 * 30) * 2.5));
    // The tier the upstream served is what is billed, whatever was asked (here: the project's default tier was priority).
    openaiApi.reply(openaiAnswer('priority'));
    expect(await costOf((await responses('gpt-5.5')).requestId)).toBe(20_000);
    openaiApi.reply(openaiAnswer('default'));
    expect(await costOf((await responses('gpt-5.5', { service_tier: 'priority' })).requestId)).toBe(8_000);

    // claude-opus-4-8: $5 / $25 standard; fast mode 2x, reported as usage.speed.
    anthropicApi.reply(anthropicAnswer({ speed: 'fast' }));
    const fast = await messages('claude-opus-4-8', { speed: 'fast' });
    expect(fast.status).toBe(200);
    expect(await costOf(fast.requestId)).toBe((1000 * 5 + 100 * 25) * 2);
  });

  test('a fast stream is billed at the fast rate too (usage.speed in message_start)', async () => {
    const stream = fixture('anthropic/text-stream.sse').replace('"output_tokens":1}', '"output_tokens":1,"speed":"fast"}');
    anthropicApi.reply(sendSse(stream));
    const fast = await messages('claude-opus-4-8', { speed: 'fast', stream: true });
    // 25 input, 1,024 cache reads, 3 cache writes, 7 output, at 2x.
    expect(await costOf(fast.requestId)).toBe(Math.round((25 * 5 + 1024 * 0.5 + 3 * 6.25 + 7 * 25) * 2));
  });

  test('US-only inference (inference_geo "us") is billed at 1.1x', async () => {
    anthropicApi.reply(anthropicAnswer({ inference_geo: 'us' }));
    expect(await costOf((await messages('claude-opus-4-8')).requestId)).toBe(Math.round((1000 * 5 + 100 * 25) * 1.1));
  });
});

describe('server-tool calls and background responses (item 5)', () => {
  test("server-tool calls are billed per call: Anthropic's from usage.server_tool_use, OpenAI's from the output items", async () => {
    // $10 per 1,000 web searches; web fetch costs only its tokens.
    anthropicApi.reply(anthropicAnswer({ server_tool_use: { web_search_requests: 3, web_fetch_requests: 2 } }));
    expect(await costOf((await messages('claude-opus-4-8')).requestId)).toBe(1000 * 5 + 100 * 25 + 3 * 10_000);
    const search = { id: 'ws_1', type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'x' } };
    openaiApi.reply(openaiAnswer('default', [search, { ...search, id: 'ws_2' }, { id: 'fs_1', type: 'file_search_call', status: 'completed', queries: [] }]));
    expect(await costOf((await responses('gpt-5.4')).requestId)).toBe(Math.round(1000 * 2.5 + 100 * 15) + 2 * 10_000 + 2_500);
  });

  test('background: true is refused (its 200 carries no usage and its answer is fetched past the gateway)', async () => {
    const sent = openaiApi.requests.length;
    const refused = await responses('gpt-5.4', { background: true });
    expect({ status: refused.status, param: refused.body.error.param }).toEqual({ status: 400, param: 'background' });
    expect(openaiApi.requests.length).toBe(sent);
  });
});

describe('model names without a price on a pass-any-name route (item 10)', () => {
  test('refused with a 400 naming the model, in each format, before the upstream is called', async () => {
    const sent = anthropicApi.requests.length + openaiApi.requests.length;
    const claude = await messages('claude-mystery-9');
    expect({ status: claude.status, type: claude.body.error.type }).toEqual({ status: 400, type: 'invalid_request_error' });
    expect(claude.body.error.message).toContain('Model "claude-mystery-9" has no known price');
    // o1-pro was charged the $5 / $25 fallback on an o* route, far below its list price.
    const o1 = await responses('o1-pro');
    expect({ status: o1.status, code: o1.body.error.code, param: o1.body.error.param }).toEqual({ status: 400, code: 'model_not_priced', param: 'model' });
    expect(anthropicApi.requests.length + openaiApi.requests.length).toBe(sent);
  });

  test('served when the config prices the name, when the route allows unpriced names (fallback price, flagged), and on the simulator', async () => {
    anthropicApi.reply(anthropicAnswer({}));
    const priced = await messages('priced-model');
    expect(await costOf(priced.requestId)).toBe(1000 * 1 + 100 * 2);
    anthropicApi.reply(anthropicAnswer({}));
    const allowed = await messages('team-model');
    expect(allowed.status).toBe(200);
    expect(await logOf(gateway, allowed.requestId)).toMatchObject({ priceSource: 'fallback', costUsd: (1000 * 5 + 100 * 25) / 1e6 });
    expect((await messages('anything-the-simulator-answers')).status).toBe(200);
    // A known model on the same glob route is served as always.
    anthropicApi.reply(anthropicAnswer({}));
    expect((await messages('claude-sonnet-5')).status).toBe(200);
  });

  test('a "*" price in the config is the operator\'s own fallback: unknown names are served at it', async () => {
    const own = await startGateway({ config: { upstreams: { ant: { type: 'anthropic', baseUrl: anthropicApi.url } }, routes: [{ model: 'claude-*', upstream: 'ant' }], prices: { '*': { inputPerMTok: 20, outputPerMTok: 100 } } } });
    try {
      const issued = await own.issueKey();
      anthropicApi.reply(anthropicAnswer({}));
      const response = await fetch(`${own.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${issued.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-mystery-9', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }) });
      await response.text();
      expect(response.status).toBe(200);
      expect((await logOf(own, response.headers.get('request-id'))).costUsd).toBe((1000 * 20 + 100 * 100) / 1e6);
    } finally {
      await own.close();
    }
  });
});
