import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { completePrice } from '../../lambda/config/prices.ts';
import type { Usage } from '../../lambda/observability/usage.ts';
import { keyUsage } from '../../bin/local/key-commands.ts';
import { costMicroUsd } from '../../lambda/usage/cost.ts';
import { monthStart } from '../../lambda/usage/limits.ts';
import { emfViolations } from '../support/emf.ts';
import { logOf, startGateway, type Harness } from '../support/gateway-harness.ts';
import { fixture, sendJson, sendSse, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';

/**
 * Spend in dollars through the real pipeline: what is recorded equals what the clients were
 * told, priced per token kind; dollar budgets refuse exactly at the boundary; every answer to a
 * budgeted key says how much is used; on Lambda the log line is a valid EMF record.
 */
const PRICES = {
  'claude-real': { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75, cacheWrite1hPerMTok: 6 },
  'gpt-sim': { inputPerMTok: 1.25, outputPerMTok: 10, cacheReadPerMTok: 0.125 },
  'claude-sim': { inputPerMTok: 2, outputPerMTok: 8 },
};
const config = (url: string) => ({
  upstreams: { ant: { type: 'anthropic', baseUrl: url }, sim: { type: 'simulator' } },
  routes: [
    { model: 'claude-real', upstream: 'ant' },
    { model: '*', upstream: 'sim' },
  ],
  prices: PRICES,
});

// The Anthropic answer: 25 input, 1,024 cache reads, 3 cache writes of which 2 for an hour.
const withCacheSplit = (text: string) => text.replaceAll('"cache_creation_input_tokens":3,', '"cache_creation_input_tokens":3,"cache_creation":{"ephemeral_5m_input_tokens":1,"ephemeral_1h_input_tokens":2},');

let upstream: UpstreamStub;
let gateway: Harness;
let second: Harness;

beforeAll(async () => {
  upstream = await startUpstream(sendSse(withCacheSplit(fixture('anthropic/text-stream.sse'))));
  gateway = await startGateway({ config: config(upstream.url), settings: { metricsNamespace: 'AgentGatewayTest' } });
  second = await startGateway({ config: config(upstream.url), shareStoreWith: gateway, settings: { usageFlushMs: 200 } });
});

afterAll(async () => {
  await second.close();
  await gateway.close();
  await upstream.close();
});

const clients = (key: string, harness: Harness) => ({
  anthropic: new Anthropic({ baseURL: `${harness.url}/first`, apiKey: key, maxRetries: 0 }),
  openai: new OpenAI({ baseURL: `${harness.url}/second/v1`, apiKey: key, maxRetries: 0 }),
});

const priceOf = (model: keyof typeof PRICES) => completePrice(PRICES[model]);

function fromAnthropic(usage: Anthropic.Usage): Usage {
  const split = (usage as unknown as { cache_creation?: { ephemeral_1h_input_tokens?: number } }).cache_creation;
  return { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens, cacheReadTokens: usage.cache_read_input_tokens ?? 0, cacheWriteTokens: usage.cache_creation_input_tokens ?? 0, cacheWrite1hTokens: split?.ephemeral_1h_input_tokens ?? 0 };
}

/** Once every invocation on both instances has ended and the batching one has flushed: what `keys usage --json` reports. */
async function recordedUsage(id: string): Promise<{ totals: { costMicroUsd: number; costUsd: number } }> {
  for (const until = Date.now() + 10_000; gateway.server.inFlight > 0 || second.server.inFlight > 0; ) {
    if (Date.now() > until) throw new Error(`invocations still running after 10 s (${gateway.server.inFlight} and ${second.server.inFlight} in flight): their usage was never recorded`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await second.recorder.flush();
  const lines: string[] = [];
  await keyUsage(gateway.store, gateway.usage, id, '2000-01-01', { json: true, print: (text) => lines.push(text) });
  return JSON.parse(lines[0] as string);
}

test('a concurrent burst on two instances records exactly the cost of what the clients received, per token kind', async () => {
  const { key, id } = await gateway.issueKey({ name: 'spend-burst' });
  let expected = 0;
  const calls = Array.from({ length: 32 }, async (_, index) => {
    const { anthropic, openai } = clients(key, index % 2 ? second : gateway);
    const prompt = `request ${index} ${'y'.repeat(index * 11)}`;
    if (index % 4 === 0) {
      upstream.reply(sendSse(withCacheSplit(fixture('anthropic/text-stream.sse'))));
      const message = await anthropic.messages.stream({ model: 'claude-real', max_tokens: 50, messages: [{ role: 'user', content: prompt }] }).finalMessage();
      expected += costMicroUsd(fromAnthropic(message.usage), priceOf('claude-real'));
    } else if (index % 4 === 1) {
      const message = await anthropic.messages.create({ model: 'claude-sim', max_tokens: 50, messages: [{ role: 'user', content: prompt }] });
      expected += costMicroUsd(fromAnthropic(message.usage), priceOf('claude-sim'));
    } else {
      const response = index % 4 === 2 ? await openai.responses.create({ model: 'gpt-sim', input: prompt }) : await openai.responses.stream({ model: 'gpt-sim', input: prompt }).finalResponse();
      const cached = response.usage?.input_tokens_details.cached_tokens ?? 0;
      expected += costMicroUsd({ inputTokens: (response.usage?.input_tokens ?? 0) - cached, outputTokens: response.usage?.output_tokens ?? 0, cacheReadTokens: cached, cacheWriteTokens: 0 }, priceOf('gpt-sim'));
    }
  });
  await Promise.all(calls);
  const { totals } = await recordedUsage(id);
  expect(expected).toBeGreaterThan(0);
  expect(totals.costMicroUsd).toBe(expected);
  expect(totals.costUsd).toBe(expected / 1e6);
  // The 1-hour writes were priced as such: 2 tokens at $6/MTok, not $3.75.
  const one = costMicroUsd({ inputTokens: 25, outputTokens: 15, cacheReadTokens: 1024, cacheWriteTokens: 3, cacheWrite1hTokens: 2 }, priceOf('claude-real'));
  expect(one).toBe(Math.round(25 * 3 + 15 * 15 + 1024 * 0.3 + 1 * 3.75 + 2 * 6));
});

test('a dollar budget is refused exactly when spent: billing_error on /first, insufficient_quota on /second, not to be retried before the reset', async () => {
  const body = { model: 'claude-sim', max_tokens: 20, messages: [{ role: 'user' as const, content: 'the same prompt every time' }] };
  const probe = await gateway.issueKey({ name: 'probe' });
  const once = fromAnthropic((await clients(probe.key, gateway).anthropic.messages.create(body)).usage);
  const perRequest = costMicroUsd(once, priceOf('claude-sim'));
  const { key } = await gateway.issueKey({ name: 'budgeted', limits: { microUsdPerDay: 2 * perRequest } });
  const { anthropic, openai } = clients(key, gateway);

  const first = await anthropic.messages.create(body).withResponse();
  expect(first.response.headers.get('anthropic-ratelimit-unified-status')).toBe('allowed');
  const second = await anthropic.messages.create(body).withResponse();
  expect(second.response.headers.get('anthropic-ratelimit-unified-overage-utilization')).toBe('0.5');

  const refused = await fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(refused.status).toBe(429);
  expect(refused.headers.get('x-should-retry')).toBe('false');
  const retryAfter = Number(refused.headers.get('retry-after'));
  const midnight = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1);
  expect(Math.abs(retryAfter - (midnight - Date.now()) / 1000)).toBeLessThan(5);
  expect(await refused.json()).toMatchObject({ type: 'error', error: { type: 'billing_error', message: expect.stringContaining('budget for the day') } });
  expect(refused.headers.get('anthropic-ratelimit-unified-status')).toBe('rejected');
  expect(refused.headers.get('anthropic-ratelimit-unified-overage-disabled-reason')).toBe('org_spend_cap_reached');

  const error = await openai.responses.create({ model: 'gpt-sim', input: 'x' }).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(OpenAI.RateLimitError);
  expect((error as InstanceType<typeof OpenAI.RateLimitError>).error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
  const raw = await fetch(`${gateway.url}/second/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-sim', input: 'x' }) });
  expect(raw.status).toBe(429);
  expect(Math.abs(Number(raw.headers.get('retry-after')) - retryAfter)).toBeLessThan(5);

  // One micro-dollar more of budget: the same two requests leave it unspent, so a third passes, a fourth does not.
  const roomy = await gateway.issueKey({ name: 'budgeted-plus-one', limits: { microUsdPerDay: 2 * perRequest + 1 } });
  const more = clients(roomy.key, gateway).anthropic;
  await more.messages.create(body);
  await more.messages.create(body);
  const third = await more.messages.create(body).withResponse();
  expect(third.response.status).toBe(200);
  await expect(more.messages.create(body)).rejects.toMatchObject({ status: 429, error: { error: { type: 'billing_error' } } });
});

test('the budget holds between flushes on an instance that batches its writes', async () => {
  const body = { model: 'claude-sim', max_tokens: 20, messages: [{ role: 'user' as const, content: 'batched' }] };
  const probe = await second.issueKey({ name: 'probe-batched' });
  const perRequest = costMicroUsd(fromAnthropic((await clients(probe.key, second).anthropic.messages.create(body)).usage), priceOf('claude-sim'));
  const { key, id } = await second.issueKey({ name: 'batched', limits: { microUsdPerMonth: perRequest } });
  const { anthropic } = clients(key, second);
  await anthropic.messages.create(body);
  // Nothing may be written yet (200 ms interval); the refusal must not wait for it.
  await expect(anthropic.messages.create(body)).rejects.toMatchObject({ status: 429 });
  expect(await second.recorder.days(id, monthStart(new Date()))).toEqual([expect.objectContaining({ requests: 1, costMicroUsd: perRequest })]);
});

test('with a metrics namespace (Lambda) the request line is a valid EMF record; a model without a price is charged the fallback and flagged', async () => {
  upstream.reply(sendJson(200, JSON.parse(fixture('anthropic/text.json'))));
  const { key } = await gateway.issueKey({ name: 'emf' });
  const response = await fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-real', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }) });
  await response.text();
  const line = await logOf(gateway, response.headers.get('request-id'));
  expect(emfViolations(line)).toEqual([]);
  expect(line).toMatchObject({ Model: 'claude-real', Upstream: 'ant', Requests: 1, costUsd: expect.any(Number), CostMicroUsd: expect.any(Number) });
  expect((line._aws as { CloudWatchMetrics: { Namespace: string }[] }).CloudWatchMetrics[0]?.Namespace).toBe('AgentGatewayTest');
  expect(line.keyId).toBeDefined();
  expect(Object.values((line._aws as { CloudWatchMetrics: { Dimensions: string[][] }[] }).CloudWatchMetrics).flatMap((directive) => directive.Dimensions.flat())).not.toContain('KeyId');

  // No price for this name in the table or the config: the fallback price, flagged.
  const unpriced = startGateway({ config: { upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }] }, shareStoreWith: gateway });
  const other = await unpriced;
  try {
    const answer = await fetch(`${other.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'house-model', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }) });
    await answer.text();
    const flagged = await logOf(other, answer.headers.get('request-id'));
    expect(flagged.priceSource).toBe('fallback');
    expect(flagged.costUsd as number).toBeGreaterThan(0);
  } finally {
    await other.close();
  }
});
