import { readFileSync } from 'node:fs';
import { jest } from '@jest/globals';
import { BEDROCK_ANTHROPIC_VERSION, toInvokeBody } from '../../../../lambda/upstream/bedrock/invoke-body.ts';

/** A body as Claude Code sends it (thinking with a signature, system blocks with cache_control, metadata), serialized as a client would. */
const claudeCode = (JSON.parse(readFileSync(new URL('../../../fixtures/translate/claude-code-request.json', import.meta.url), 'utf8')) as { body: Record<string, unknown> }).body;
const withThinking = {
  ...claudeCode,
  messages: [
    ...(claudeCode.messages as unknown[]),
    { role: 'assistant', content: [{ type: 'thinking', thinking: 'Let me think — ünïcödé.', signature: 'EqQBCkYIBxgCKkD+/Sig==' }, { type: 'text', text: 'Done.' }] },
    { role: 'user', content: 'next' },
  ],
  context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
};
const raw = JSON.stringify(withThinking, null, 1);
/** As the gateway calls it: the bytes, and the body it parsed once on arrival. */
const invoke = (text: string, betaHeader: string | undefined) => toInvokeBody(text, JSON.parse(text), betaHeader);

test('model and stream leave the body, the version and the header\'s betas come in, and every other byte stays', () => {
  const { body, dropped } = invoke(raw, 'claude-code-20250219, interleaved-thinking-2025-05-14,context-management-2025-06-27,files-api-2025-04-14,advanced-tool-use-2025-11-20');
  const parsed = JSON.parse(body);
  expect(parsed.model).toBeUndefined();
  expect(parsed.stream).toBeUndefined();
  expect(parsed.anthropic_version).toBe(BEDROCK_ANTHROPIC_VERSION);
  expect(parsed.anthropic_beta).toEqual(['interleaved-thinking-2025-05-14', 'context-management-2025-06-27', 'tool-search-tool-2025-10-19']);
  // output_config (effort) goes too: Bedrock takes it only with the effort beta, not sent here.
  expect(dropped).toEqual(['anthropic-beta claude-code-20250219', 'anthropic-beta files-api-2025-04-14', 'metadata', 'output_config']);
  expect(JSON.parse(invoke(raw, 'effort-2025-11-24').body).output_config).toEqual(claudeCode.output_config);
  // Byte for byte: the system blocks (with cache_control) and the signed thinking block.
  const system = raw.slice(raw.indexOf('"system"'), raw.indexOf('"messages"'));
  expect(body).toContain(system);
  const thinking = raw.slice(raw.lastIndexOf('{', raw.indexOf('"type": "thinking"')), raw.indexOf('"Done."'));
  expect(thinking.length).toBeGreaterThan(50);
  expect(body).toContain(thinking);
  expect(parsed.context_management).toEqual(withThinking.context_management);
});

test('members Bedrock takes only with their beta are dropped without it; a body\'s own anthropic_beta and version are kept', () => {
  const without = invoke(JSON.stringify({ model: 'm', max_tokens: 5, messages: [], context_management: {}, output_config: { effort: 'high' }, service_tier: 'auto' }), undefined);
  expect(JSON.parse(without.body)).toEqual({ anthropic_version: BEDROCK_ANTHROPIC_VERSION, max_tokens: 5, messages: [] });
  expect(without.dropped).toEqual(['service_tier', 'context_management', 'output_config']);
  const own = invoke(JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', anthropic_beta: ['effort-2025-11-24'], max_tokens: 5, messages: [], output_config: { effort: 'high' } }), 'files-api-2025-04-14');
  expect(JSON.parse(own.body)).toEqual({ anthropic_version: 'bedrock-2023-05-31', anthropic_beta: ['effort-2025-11-24'], max_tokens: 5, messages: [], output_config: { effort: 'high' } });
  expect(own.dropped).toEqual([]);
});

test('structured outputs pass without a beta (output_config.format is documented for InvokeModel); effort alongside it goes without its beta', () => {
  const schema = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] };
  const formatOnly = JSON.stringify({ model: 'm', max_tokens: 5, messages: [], output_config: { format: { type: 'json_schema', schema } } });
  const kept = invoke(formatOnly, undefined);
  expect(kept.dropped).toEqual([]);
  expect(kept.body).toContain(`"output_config":${JSON.stringify({ format: { type: 'json_schema', schema } })}`);
  const both = invoke(JSON.stringify({ model: 'm', max_tokens: 5, messages: [], output_config: { effort: 'high', format: { type: 'json_schema', schema } } }), undefined);
  expect(JSON.parse(both.body).output_config).toEqual({ format: { type: 'json_schema', schema } });
  expect(both.dropped).toEqual(['output_config.effort']);
  const withBeta = invoke(JSON.stringify({ model: 'm', max_tokens: 5, messages: [], output_config: { effort: 'high', format: { type: 'json_schema', schema } } }), 'effort-2025-11-24');
  expect(JSON.parse(withBeta.body).output_config).toEqual({ effort: 'high', format: { type: 'json_schema', schema } });
  expect(withBeta.dropped).toEqual([]);
});

test('the body is not parsed again: output_config and anthropic_beta are read from the parsed body the gateway has', () => {
  const body = { ...withThinking, anthropic_beta: ['interleaved-thinking-2025-05-14'], output_config: { effort: 'high', format: { type: 'json_schema', schema: { type: 'object' } } } };
  const text = JSON.stringify(body);
  const parse = jest.spyOn(JSON, 'parse');
  try {
    const { dropped } = toInvokeBody(text, body, undefined);
    expect(parse.mock.calls.filter(([parsed]) => typeof parsed === 'string' && parsed.length > 1_000)).toEqual([]);
    expect(dropped).toEqual(['metadata', 'context_management', 'output_config.effort']);
  } finally {
    parse.mockRestore();
  }
});
