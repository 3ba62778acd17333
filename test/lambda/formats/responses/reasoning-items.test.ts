import { refusesReasoningItems, withoutReasoningItems } from '../../../../lambda/formats/responses/reasoning-items.ts';

test('only OpenAI\'s refusal of encrypted reasoning counts, not any 400', () => {
  const refusal = JSON.stringify({ error: { message: 'The encrypted content gAAA... could not be verified.', type: 'invalid_request_error', code: 'invalid_encrypted_content' } });
  expect(refusesReasoningItems({ statusCode: 400, body: refusal })).toBe(true);
  expect(refusesReasoningItems({ statusCode: 400, body: JSON.stringify({ error: { message: 'context_length_exceeded', code: 'context_length_exceeded' } }) })).toBe(false);
  expect(refusesReasoningItems({ statusCode: 500, body: refusal })).toBe(false);
});

test('reasoning items go, every other item and field stays', () => {
  const body = { model: 'gpt-5.5', store: false, input: [{ role: 'user', content: 'hi' }, { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAA' }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hello' }] }] };
  const cleaned = withoutReasoningItems(body);
  expect(JSON.parse(cleaned?.body as string)).toEqual({ ...body, input: [body.input[0], body.input[2]] });
  expect(cleaned?.dropped).toHaveLength(1);
  expect(withoutReasoningItems({ model: 'gpt-5.5', input: 'hi' })).toBeUndefined();
  expect(withoutReasoningItems({ model: 'gpt-5.5', input: [{ role: 'user', content: 'hi' }] })).toBeUndefined();
});
