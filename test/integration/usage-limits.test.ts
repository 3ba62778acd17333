import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { utcDay } from '../../lambda/usage/usage-table.ts';
import { startGateway, waitForLogs, type Harness } from '../support/gateway-harness.ts';
import { withinOneMinute } from '../support/minute-window.ts';
import { fixture, sendJson, sendSse, sseEvents, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';

let upstream: UpstreamStub;
let gateway: Harness;
let second: Harness;

const config = (url: string) => ({
  upstreams: { ant: { type: 'anthropic', baseUrl: url }, sim: { type: 'simulator' } },
  routes: [
    { model: 'claude-real', upstream: 'ant' },
    { model: '*', upstream: 'sim' },
  ],
});

beforeAll(async () => {
  upstream = await startUpstream();
  gateway = await startGateway({ config: config(upstream.url) });
  // A second instance on the same tables: what two concurrent Lambda instances are.
  second = await startGateway({ config: config(upstream.url), shareStoreWith: gateway });
});

afterAll(async () => {
  await second.close();
  await gateway.close();
  await upstream.close();
});

const clients = (key: string, harness = gateway) => ({
  anthropic: new Anthropic({ baseURL: `${harness.url}/first`, apiKey: key, maxRetries: 0 }),
  openai: new OpenAI({ baseURL: `${harness.url}/second/v1`, apiKey: key, maxRetries: 0 }),
});

async function totalsFor(id: string) {
  const days = await gateway.usage.days(id, utcDay(new Date()));
  return days.reduce((sum, day) => ({
    requests: sum.requests + day.requests,
    inputTokens: sum.inputTokens + day.inputTokens,
    outputTokens: sum.outputTokens + day.outputTokens,
    cacheReadTokens: sum.cacheReadTokens + day.cacheReadTokens,
    cacheWriteTokens: sum.cacheWriteTokens + day.cacheWriteTokens,
  }), { requests: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
}

/** Waits until both instances have logged `count` more lines (usage is written before the log line). */
async function settled(before: number, count: number) {
  const until = Date.now() + 10_000;
  while (gateway.logs.length + second.logs.length < before + count) {
    if (Date.now() > until) throw new Error('requests did not finish');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('usage after a concurrent burst on two instances equals exactly the sum of what the clients received', async () => {
  const { key, id } = await gateway.issueKey({ name: 'burst' });
  const received = { requests: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  const before = gateway.logs.length + second.logs.length;
  const calls = Array.from({ length: 40 }, async (_, index) => {
    const { anthropic, openai } = clients(key, index % 2 ? second : gateway);
    const prompt = `request number ${index} ${'x'.repeat(index * 7)}`;
    if (index % 4 === 0) {
      const message = await anthropic.messages.create({ model: 'claude-sim', max_tokens: 50, messages: [{ role: 'user', content: prompt }] });
      received.inputTokens += message.usage.input_tokens;
      received.outputTokens += message.usage.output_tokens;
    } else if (index % 4 === 1) {
      const message = await anthropic.messages.stream({ model: 'claude-sim', max_tokens: 50, messages: [{ role: 'user', content: prompt }] }).finalMessage();
      received.inputTokens += message.usage.input_tokens;
      received.outputTokens += message.usage.output_tokens;
    } else {
      const response = index % 4 === 2 ? await openai.responses.create({ model: 'gpt-sim', input: prompt }) : await openai.responses.stream({ model: 'gpt-sim', input: prompt }).finalResponse();
      received.inputTokens += (response.usage?.input_tokens ?? 0) - (response.usage?.input_tokens_details.cached_tokens ?? 0);
      received.outputTokens += response.usage?.output_tokens ?? 0;
    }
    received.requests++;
  });
  await Promise.all(calls);
  await settled(before, 40);
  expect(received.inputTokens).toBeGreaterThan(400);
  expect(await totalsFor(id)).toEqual(received);
});

test('a stream cut short still records what was delivered (estimated where the upstream never said)', async () => {
  const { key, id } = await gateway.issueKey();
  const events = sseEvents(fixture('anthropic/text-stream.sse'));
  upstream.reply(sendSse([...events.slice(0, 4), ...Array(40).fill(events[3])], { gapMs: 50 }));
  const before = gateway.logs.length;
  const abort = new AbortController();
  const response = await fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', signal: abort.signal, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-real', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
  const reader = response.body!.getReader();
  let text = '';
  while (!text.includes('text_delta')) text += new TextDecoder().decode((await reader.read()).value);
  abort.abort();
  const [line] = (await waitForLogs(gateway, before + 1)).slice(before);
  expect(line).toMatchObject({ outcome: 'client_closed', usageEstimated: true, usage: { inputTokens: 25, cacheReadTokens: 1024, cacheWriteTokens: 3 } });
  const totals = await totalsFor(id);
  expect(totals).toMatchObject({ requests: 1, inputTokens: 25, cacheReadTokens: 1024, cacheWriteTokens: 3 });
  expect(totals.outputTokens).toBeGreaterThan(0);
});

test('requests per minute hold exactly across two instances under concurrency, with retry-after in each format', async () => {
  await withinOneMinute(5);
  const { key } = await gateway.issueKey({ limits: { requestsPerMinute: 5 } });
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, index) =>
      fetch(`${(index % 2 ? second : gateway).url}${index % 3 ? '/first/v1/messages' : '/second/v1/responses'}`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(index % 3 ? { model: 'claude-sim', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] } : { model: 'gpt-sim', input: 'hi' }),
      }).then(async (response) => ({ status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as Record<string, any>, index })),
    ),
  );
  expect(results.filter((result) => result.status === 200)).toHaveLength(5);
  const refused = results.filter((result) => result.status === 429);
  expect(refused).toHaveLength(7);
  for (const result of refused) {
    expect(Number(result.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(result.retryAfter)).toBeLessThanOrEqual(60);
    if (result.index % 3) expect(result.body.error).toEqual({ type: 'rate_limit_error', message: 'This API key is limited to 5 requests per minute.' });
    else expect(result.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
  }
});

test('a used-up daily token budget refuses the next request with retry-after until UTC midnight; other keys are unaffected', async () => {
  const { key, id } = await gateway.issueKey({ limits: { tokensPerDay: 30 } });
  const { anthropic, openai } = clients(key);
  const before = gateway.logs.length;
  await anthropic.messages.create({ model: 'claude-sim', max_tokens: 50, messages: [{ role: 'user', content: 'use more than thirty tokens with this request please' }] });
  await waitForLogs(gateway, before + 1);
  const used = await totalsFor(id);
  expect(used.inputTokens + used.outputTokens).toBeGreaterThanOrEqual(30);
  const error = (await anthropic.messages.create({ model: 'claude-sim', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((caught: unknown) => caught)) as InstanceType<typeof Anthropic.RateLimitError>;
  expect(error).toBeInstanceOf(Anthropic.RateLimitError);
  const midnight = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1);
  expect(Math.abs(Number(error.headers?.get('retry-after')) - (midnight - Date.now()) / 1000)).toBeLessThan(5);
  await expect(openai.responses.create({ model: 'gpt-sim', input: 'x' })).rejects.toMatchObject({ status: 429, code: 'token_budget_exceeded' });
  const other = await gateway.issueKey();
  expect((await clients(other.key).anthropic.messages.create({ model: 'claude-sim', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).type).toBe('message');
});

test('the output-token ceiling clamps requests (body otherwise byte-for-byte) instead of refusing them', async () => {
  const { key } = await gateway.issueKey({ limits: { maxOutputTokens: 100 } });
  upstream.reply(sendJson(200, fixture('anthropic/text.json')));
  const body = '{"model":"claude-real","max_tokens":64000,"messages":[{"role":"user","content":"hi"}],"metadata":{"user_id":"u"}}';
  const response = await fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body });
  expect(response.status).toBe(200);
  expect(upstream.requests.at(-1)!.body).toBe(body.replace('64000', '100'));
  const small = '{"model":"claude-real","max_tokens":50,"messages":[]}';
  await fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: small });
  expect(upstream.requests.at(-1)!.body).toBe(small);
  const result = await clients(key).openai.responses.create({ model: 'gpt-sim', input: 'hi' });
  expect(result.max_output_tokens).toBe(100);
});
