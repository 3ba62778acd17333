import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startGateway, type Harness } from '../support/gateway-harness.ts';
import { fixture, sendSse, sseEvents, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';

/**
 * GATEWAY_STREAM_PAD_BYTES (off by default) pads each stream write with an SSE comment line, for
 * a path that holds back small writes (docs/deployment.md, "Streaming delivery"). The official SDKs must read
 * the same events with it on as with it off: passthrough and translated, both formats.
 */
const PAD = 2_048;
let upstream: UpstreamStub;
let plain: Harness;
let padded: Harness;

beforeAll(async () => {
  upstream = await startUpstream(sendSse(sseEvents(fixture('anthropic/thinking-tool-stream.sse'))));
  const config = { upstreams: { sim: { type: 'simulator' }, ant: { type: 'anthropic', baseUrl: upstream.url } }, routes: [{ model: 'claude-stub', upstream: 'ant' }, { model: '*', upstream: 'sim' }] };
  plain = await startGateway({ config });
  padded = await startGateway({ config, settings: { streamPadBytes: PAD } });
});

afterAll(async () => {
  await Promise.all([plain.close(), padded.close(), upstream.close()]);
});

async function messagesEvents(gateway: Harness, model: string) {
  const { key } = await gateway.issueKey();
  const client = new Anthropic({ baseURL: `${gateway.url}/first`, apiKey: key, maxRetries: 0 });
  const events: unknown[] = [];
  const stream = client.messages.stream({ model, max_tokens: 200, thinking: { type: 'enabled', budget_tokens: 100 }, messages: [{ role: 'user', content: 'say hello with the get_weather tool' }], tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }] });
  for await (const event of stream) events.push(event);
  return { events, message: await stream.finalMessage() };
}

async function responsesEvents(gateway: Harness, model: string) {
  const { key } = await gateway.issueKey();
  const client = new OpenAI({ baseURL: `${gateway.url}/second/v1`, apiKey: key, maxRetries: 0 });
  const events: { type: string }[] = [];
  for await (const event of await client.responses.create({ model, input: 'say hello', stream: true })) events.push(event);
  return events;
}

/** Ids and timestamps differ between two answers; the events' sequence and content must not. */
const stable = (value: unknown) => JSON.parse(JSON.stringify(value).replace(/"(id|item_id|created_at|signature)":("[^"]*"|\d+)/g, '"$1":"*"').replace(/(msg|resp|rs|fc|call|toolu|req)_[A-Za-z0-9]+/g, '$1_*'));

test('the padding is on the wire: an SSE comment line after the events of each write', async () => {
  const { key } = await padded.issueKey();
  const response = await fetch(`${padded.url}/first/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-stub', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
  const text = await response.text();
  expect(text).toMatch(/\n\n: {100,}\n/);
  expect(text.length).toBeGreaterThanOrEqual(PAD);
});

test.each([
  ['passed through (Anthropic-shaped upstream)', 'claude-stub'],
  ['from the simulator', 'claude-sim'],
])('Messages, %s: the Anthropic SDK reads the same events and message, padded or not', async (_name, model) => {
  const [a, b] = [await messagesEvents(plain, model), await messagesEvents(padded, model)];
  expect(stable(b)).toEqual(stable(a));
  expect(b.events.length).toBeGreaterThan(3);
});

test.each([
  ['translated (Anthropic-shaped upstream)', 'claude-stub'],
  ['from the simulator', 'gpt-sim'],
])('Responses, %s: the OpenAI SDK reads the same events, padded or not', async (_name, model) => {
  const [a, b] = [await responsesEvents(plain, model), await responsesEvents(padded, model)];
  expect(stable(b)).toEqual(stable(a));
  expect(b.at(-1)?.type).toBe('response.completed');
});
