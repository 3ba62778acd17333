import { logOf, startGateway, type Harness } from '../support/gateway-harness.ts';
import { fixture, sendJson, sendSse, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';

/**
 * The EMF Model dimension through the whole pipeline: a name a glob route passes on counts under
 * its own name only once an upstream accepted it, so made-up names cannot mint custom metrics.
 */
let anthropicApi: UpstreamStub;
let openaiApi: UpstreamStub;
let gateway: Harness;
let key: string;

beforeAll(async () => {
  [anthropicApi, openaiApi] = await Promise.all([startUpstream(), startUpstream()]);
  gateway = await startGateway({
    config: {
      upstreams: {
        ant: { type: 'anthropic', baseUrl: anthropicApi.url },
        oai: { type: 'openai', baseUrl: `${openaiApi.url}/v1` },
        // Port 9 (discard) on loopback: nothing listens, the connection is refused.
        dead: { type: 'anthropic', baseUrl: 'http://127.0.0.1:9' },
        sim: { type: 'simulator' },
      },
      // The glob routes pass any name on, priced or not: what a client can mint is bounded by the dimension rule, not by prices.
      routes: [
        { model: 'team-fast', upstream: 'ant', upstreamModel: 'claude-sonnet-5' },
        { model: 'claude-*', upstream: 'ant', allowUnpriced: true },
        { model: 'gpt-*', upstream: 'oai', allowUnpriced: true },
        { model: 'dead-*', upstream: 'dead', allowUnpriced: true },
        { model: 'sim-*', upstream: 'sim' },
      ],
    },
    settings: { metricsNamespace: 'AgentGatewayTest' },
  });
  ({ key } = await gateway.issueKey());
});

afterAll(async () => {
  await gateway.close();
  await Promise.all([anthropicApi.close(), openaiApi.close()]);
});

/** The Model dimension of one Messages request's log line, and the status the client got. */
async function dimensionOf(model: string): Promise<{ status: number; Model: unknown }> {
  const response = await fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }) });
  await response.text();
  const line = await logOf(gateway, response.headers.get('request-id'));
  return { status: response.status, Model: line.Model };
}

const notFound = sendJson(404, { type: 'error', error: { type: 'not_found_error', message: 'model: claude-made-up-1' } });

test('a glob route: the name an upstream accepted, else the glob (refused, unreachable, the simulator)', async () => {
  anthropicApi.reply(sendJson(200, JSON.parse(fixture('anthropic/text.json'))));
  expect(await dimensionOf('claude-sonnet-5')).toEqual({ status: 200, Model: 'claude-sonnet-5' });
  anthropicApi.reply(notFound);
  expect(await dimensionOf('claude-made-up-1')).toEqual({ status: 404, Model: 'claude-*' });
  expect(await dimensionOf('dead-made-up-2')).toEqual({ status: 502, Model: 'dead-*' });
  expect(await dimensionOf('sim-made-up-3')).toEqual({ status: 200, Model: 'sim-*' });
});

test('a translated glob route: the name once the upstream accepted it', async () => {
  openaiApi.reply(sendSse(fixture('openai/text-stream.sse')));
  expect(await dimensionOf('gpt-5.5')).toEqual({ status: 200, Model: 'gpt-5.5' });
  openaiApi.reply(sendJson(404, { error: { message: 'The model `gpt-made-up` does not exist', type: 'invalid_request_error', code: 'model_not_found' } }));
  expect(await dimensionOf('gpt-made-up')).toEqual({ status: 404, Model: 'gpt-*' });
});

test('a name the config gives is the dimension, refused or not', async () => {
  anthropicApi.reply(notFound);
  expect(await dimensionOf('team-fast')).toEqual({ status: 404, Model: 'claude-sonnet-5' });
});
