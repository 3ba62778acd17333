import { thinkingCannotStay } from '../../../../lambda/formats/messages/tool-turn.ts';

const REASON = 'thinking (the turn being continued has no Anthropic thinking block)';
const toolUse = { type: 'tool_use', id: 't1', name: 'Read', input: {} };
const toolResult = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] };

test('continuing a tool turn that does not open with a thinking block: thinking cannot stay', () => {
  expect(thinkingCannotStay([{ role: 'user', content: 'go' }, { role: 'assistant', content: [toolUse] }, toolResult])).toBe(REASON);
  expect(thinkingCannotStay([{ role: 'user', content: 'go' }, { role: 'assistant', content: 'text only' }, toolResult])).toBe(REASON);
  expect(thinkingCannotStay([{ role: 'user', content: 'go' }, { role: 'assistant', content: [null, toolUse] }, toolResult])).toBe(REASON);
});

test('a turn that opens with thinking, or a request that continues no tool turn, keeps thinking', () => {
  for (const first of [{ type: 'thinking', thinking: 'x', signature: 's' }, { type: 'redacted_thinking', data: 'd' }]) {
    expect(thinkingCannotStay([{ role: 'user', content: 'go' }, { role: 'assistant', content: [first, toolUse] }, toolResult])).toBeUndefined();
  }
  expect(thinkingCannotStay([{ role: 'user', content: 'go' }, { role: 'assistant', content: [toolUse] }, { role: 'user', content: 'next' }])).toBeUndefined();
  expect(thinkingCannotStay([toolResult])).toBeUndefined();
  expect(thinkingCannotStay([null, 'x', { role: 'user', content: [null] }])).toBeUndefined();
});
