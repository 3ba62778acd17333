import { useChaosGateway } from './support/lifecycle.ts';
import { expectError, jsonHeaders, send, type Family } from './support/requests.ts';

/**
 * Issue "Hardening", items 4-6: bodies built to hurt. Each gets a 400 in the client's own format,
 * never a 500, never a trip to the upstream, and never a giant log line.
 */
const chaos = useChaosGateway();

const DEPTH = 100_000;
/** 100,000 nested arrays. */
const DEEP_ARRAY = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;
/** 100,000 levels of objects and arrays in turn, as a JSON schema's `properties` could nest. */
const DEEP_OBJECT = `${'{"a":['.repeat(DEPTH / 2)}1${']}'.repeat(DEPTH / 2)}`;

interface Target {
  path: string;
  family: Family;
  model: string;
}

const TARGETS: Record<string, Target> = {
  '/first/v1/messages': { path: '/first/v1/messages', family: 'messages', model: 'sim-deep' },
  '/first/v1/messages/count_tokens': { path: '/first/v1/messages/count_tokens', family: 'messages', model: 'sim-deep' },
  '/second/v1/responses': { path: '/second/v1/responses', family: 'responses', model: 'sim-deep' },
  'translated (Messages client, OpenAI upstream)': { path: '/first/v1/messages', family: 'messages', model: 'oai-ok-deep' },
  'translated (Responses client, Anthropic upstream)': { path: '/second/v1/responses', family: 'responses', model: 'anth-ok-deep' },
};

/** A body with `deep` (raw JSON text) as a message's content, or as a tool's input schema. */
function deepBody(target: Target, where: 'content' | 'tool schema', deep: string): string {
  const model = JSON.stringify(target.model);
  const limit = target.path.endsWith('count_tokens') ? '' : target.family === 'messages' ? '"max_tokens":16,' : '';
  if (target.family === 'messages') {
    return where === 'content'
      ? `{"model":${model},${limit}"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":${deep}}]}]}`
      : `{"model":${model},${limit}"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"t","description":"d","input_schema":{"type":"object","properties":${deep}}}]}`;
  }
  return where === 'content'
    ? `{"model":${model},"input":[{"role":"user","content":${deep}}]}`
    : `{"model":${model},"input":"hi","tools":[{"type":"function","name":"t","parameters":{"type":"object","properties":${deep}}}]}`;
}

function upstreamCalls(): number {
  return chaos.providers.anthropic.requests.length + chaos.providers.openai.requests.length;
}

describe('4. 100k-deep JSON is a 400 in the client format, never a 500', () => {
  const cases = Object.keys(TARGETS).flatMap((name) =>
    (['content', 'tool schema'] as const).flatMap((where) => [
      [name, where, 'arrays', DEEP_ARRAY],
      [name, where, 'objects and arrays', DEEP_OBJECT],
    ]),
  ) as [string, 'content' | 'tool schema', string, string][];

  test.each(cases)('%s: %s nested 100,000 deep (%s)', async (name, where, _kind, deep) => {
    const target = TARGETS[name] as Target;
    const before = upstreamCalls();
    const answer = await send(chaos.gateway.url, target.path, { headers: jsonHeaders(chaos.gateway.key, target.family), body: deepBody(target, where, deep) });
    expectError(answer, target.family, 400, 'invalid_request_error');
    expect(answer.headers['x-should-retry']).toBe('false');
    expect(upstreamCalls()).toBe(before);
    await chaos.gateway.probe('after a 100k-deep body');
  });
});

describe('5. model names', () => {
  test.each(['messages', 'responses'] as const)('a model name over 256 characters is a 400 (%s)', async (family) => {
    const model = `sim-${'m'.repeat(253)}`;
    const body = family === 'messages' ? { model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } : { model, input: 'hi' };
    const answer = await send(chaos.gateway.url, family === 'messages' ? '/first/v1/messages' : '/second/v1/responses', { headers: jsonHeaders(chaos.gateway.key, family), body: JSON.stringify(body) });
    expectError(answer, family, 400, 'invalid_request_error');
  });

  test('a 100 KB model name is refused and does not reach the log line', async () => {
    const model = `sim-${'m'.repeat(100_000)}`;
    const answer = await send(chaos.gateway.url, '/first/v1/messages', { headers: jsonHeaders(chaos.gateway.key), body: JSON.stringify({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }) });
    const line = await chaos.gateway.lineOf(answer.headers['request-id'] as string);
    expect(line.raw.length).toBeLessThan(2_000);
    expect(line.raw).not.toContain('m'.repeat(300));
    expectError(answer, 'messages', 400, 'invalid_request_error');
  });
});

describe('6. duplicate members that decide routing or limits are a 400 naming the member', () => {
  const cases: [Family, string, string][] = [
    ['messages', 'model', '{"model":"anth-ok-dup","model":"sim-dup","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}'],
    ['messages', 'stream', '{"model":"anth-ok-dup","stream":false,"max_tokens":16,"stream":true,"messages":[{"role":"user","content":"hi"}]}'],
    ['messages', 'max_tokens', '{"model":"anth-ok-dup","max_tokens":16,"messages":[{"role":"user","content":"hi"}],"max_tokens":64000}'],
    ['responses', 'model', '{"model":"oai-ok-dup","input":"hi","model":"sim-dup"}'],
    ['responses', 'stream', '{"model":"oai-ok-dup","stream":true,"input":"hi","stream":false}'],
    ['responses', 'max_output_tokens', '{"model":"oai-ok-dup","max_output_tokens":16,"input":"hi","max_output_tokens":100000}'],
  ];

  test.each(cases)('%s: duplicate "%s"', async (family, member, body) => {
    const before = upstreamCalls();
    const answer = await send(chaos.gateway.url, family === 'messages' ? '/first/v1/messages' : '/second/v1/responses', { headers: jsonHeaders(chaos.gateway.key, family), body });
    const error = expectError(answer, family, 400, 'invalid_request_error');
    expect(`${error.message} ${error.param ?? ''}`).toContain(member);
    expect(upstreamCalls()).toBe(before);
  });
});
