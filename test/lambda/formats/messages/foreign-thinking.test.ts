import { withoutForeignThinking } from '../../../../lambda/formats/messages/foreign-thinking.ts';
import { packCarrier } from '../../../../lambda/translate/reasoning-carry.ts';

const native = { type: 'thinking', thinking: 'Read the file first.', signature: 'EqQBnativeAnthropicSig' };
const foreign = { type: 'thinking', thinking: 'Plan the call.', signature: packCarrier({ provider: 'openai', id: 'rs_1', encryptedContent: 'gAAA' }, 'Plan the call.') };
const foreignRedacted = { type: 'redacted_thinking', data: packCarrier({ provider: 'openai', id: 'rs_2', encryptedContent: null }, '') };
const toolUse = (id: string) => ({ type: 'tool_use', id, name: 'Read', input: { file_path: '/a.ts' } });
const toolResult = (id: string) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: '1\tconst a = 1;' }] });

const request = (messages: unknown[], extra: Record<string, unknown> = {}) => {
  const body = { model: 'claude-sonnet-5', max_tokens: 4_000, thinking: { type: 'enabled', budget_tokens: 2_048 }, system: [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral', ttl: '1h' } }], context_management: { edits: [] }, messages, ...extra };
  return { raw: JSON.stringify(body), body };
};

test('without foreign blocks the client bytes go out untouched (a "gw1." elsewhere is just text)', () => {
  const { raw, body } = request([{ role: 'user', content: 'what does "gw1.x" mean?' }]);
  expect(withoutForeignThinking(raw, body)).toEqual({ body: raw, dropped: [] });
});

test('foreign blocks go; native thinking and every other field stay as sent', () => {
  const messages = [
    { role: 'user', content: 'Fix the bug' },
    { role: 'assistant', content: [native, toolUse('t1')] },
    toolResult('t1'),
    { role: 'assistant', content: [foreign, foreignRedacted, { type: 'text', text: 'Done.' }] },
    { role: 'user', content: 'Thanks, now the tests' },
  ];
  const { raw, body } = request(messages);
  const cleaned = withoutForeignThinking(raw, body);
  expect(cleaned?.dropped).toEqual(['reasoning from another provider']);
  const sent = JSON.parse(cleaned?.body as string);
  expect(sent).toEqual({ ...body, messages: [messages[0], messages[1], messages[2], { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] }, messages[4]] });
});

test('continuing a tool turn that opened with foreign reasoning: thinking is off for this request', () => {
  const { raw, body } = request([{ role: 'user', content: 'Weather?' }, { role: 'assistant', content: [foreign, toolUse('call_1')] }, toolResult('call_1')]);
  const cleaned = withoutForeignThinking(raw, body);
  expect(cleaned?.dropped).toEqual(['reasoning from another provider', 'thinking (the turn being continued has no Anthropic thinking block)']);
  const sent = JSON.parse(cleaned?.body as string);
  expect(sent.thinking).toBeUndefined();
  expect(sent.messages[1].content).toEqual([toolUse('call_1')]);
  // Without thinking asked for there is nothing to turn off.
  const plain = request([{ role: 'user', content: 'Weather?' }, { role: 'assistant', content: [foreign, toolUse('call_1')] }, toolResult('call_1')], { thinking: undefined });
  expect(withoutForeignThinking(plain.raw, plain.body)?.dropped).toEqual(['reasoning from another provider']);
  // The same rule as for translated requests: the continued turn opens with no thinking block, whatever removed it.
  const answeredWithout = request([{ role: 'user', content: 'Weather?' }, { role: 'assistant', content: [foreign, { type: 'text', text: 'Checking.' }] }, { role: 'user', content: 'go on' }, { role: 'assistant', content: [toolUse('call_2')] }, toolResult('call_2')]);
  expect(withoutForeignThinking(answeredWithout.raw, answeredWithout.body)?.dropped).toEqual(['reasoning from another provider', 'thinking (the turn being continued has no Anthropic thinking block)']);
});

test('an assistant turn made only of foreign reasoning cannot be sent this way', () => {
  const { raw, body } = request([{ role: 'user', content: 'hi' }, { role: 'assistant', content: [foreign] }, { role: 'user', content: 'again' }]);
  expect(withoutForeignThinking(raw, body)).toBeUndefined();
});

test('blocks that are not objects are no foreign reasoning: they go to the upstream as sent, for it to judge', () => {
  // The Messages schema takes any content array; a `"gw1.` in the user's text leads here too.
  const { raw, body } = request([{ role: 'user', content: 'what does "gw1.x" mean?' }, { role: 'assistant', content: [null, 'text', 7, [foreign]] }, { role: 'user', content: 'again' }]);
  expect(withoutForeignThinking(raw, body)).toEqual({ body: raw, dropped: [] });
  const mixed = request([{ role: 'user', content: 'hi' }, { role: 'assistant', content: [null, foreign, { type: 'text', text: 'Done.' }] }, { role: 'user', content: [null] }]);
  expect(JSON.parse(withoutForeignThinking(mixed.raw, mixed.body)?.body as string).messages).toEqual([{ role: 'user', content: 'hi' }, { role: 'assistant', content: [null, { type: 'text', text: 'Done.' }] }, { role: 'user', content: [null] }]);
});
