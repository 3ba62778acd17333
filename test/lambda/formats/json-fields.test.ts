import { parseJsonObject, replaceTopLevelString } from '../../../lambda/formats/json-fields.ts';

describe('replaceTopLevelString', () => {
  test('renames only the top-level member and keeps every other byte', () => {
    const body = '{ "messages":[{"role":"user","content":[{"type":"tool_use","input":{"model":"inner"}}]}],\n  "model" : "claude-x", "n": 1.50, "s":"\\u00e9\\"model\\":\\"x\\""}';
    const out = replaceTopLevelString(body, 'model', 'upstream-model');
    expect(out).toBe(body.replace('"claude-x"', '"upstream-model"'));
    expect(JSON.parse(out).messages[0].content[0].input.model).toBe('inner');
  });

  test('handles a model that comes first, last, escaped or duplicated', () => {
    expect(replaceTopLevelString('{"model":"a"}', 'model', 'b')).toBe('{"model":"b"}');
    expect(replaceTopLevelString('{"x":{"model":"a"},"model":"a"}', 'model', 'b')).toBe('{"x":{"model":"a"},"model":"b"}');
    expect(JSON.parse(replaceTopLevelString('{"mod\\u0065l":"a"}', 'model', 'b')).model).toBe('b');
    // JSON.parse keeps the last duplicate, so that is the one the upstream must see renamed.
    expect(JSON.parse(replaceTopLevelString('{"model":"a","model":"c"}', 'model', 'b')).model).toBe('b');
    expect(replaceTopLevelString('{"stream":true}', 'model', 'b')).toBe('{"stream":true}');
  });

  test('the new value is JSON-escaped', () => {
    expect(JSON.parse(replaceTopLevelString('{"model":"a"}', 'model', 'we"ird\\name')).model).toBe('we"ird\\name');
  });
});

describe('parseJsonObject', () => {
  test('objects only', () => {
    expect(parseJsonObject('{"a":1}')).toEqual({ a: 1 });
    expect(parseJsonObject('[1]')).toBeUndefined();
    expect(parseJsonObject('nope')).toBeUndefined();
  });
});
