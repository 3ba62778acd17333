import { parseJsonObject, prependTopLevelMember, removeTopLevelMembers, replaceTopLevelString, scanJsonShape, topLevelKeys } from '../../../lambda/formats/json-fields.ts';

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

describe('scanJsonShape', () => {
  const watched = new Set(['model', 'stream']);

  test('measures depth outside strings only', () => {
    const nested = (depth: number) => `{"model":"m","messages":[{"content":${'['.repeat(depth)}${']'.repeat(depth)}}]}`;
    expect(scanJsonShape(nested(10), 16, watched)).toEqual({ tooDeep: false, values: expect.any(Number) });
    expect(scanJsonShape(nested(20), 16, watched)).toEqual({ tooDeep: true, values: expect.any(Number) });
    expect(scanJsonShape(nested(100_000), 128, watched)).toEqual({ tooDeep: true, values: expect.any(Number) });
    expect(scanJsonShape(`{"text":"${'['.repeat(1000)}"}`, 4, watched)).toEqual({ tooDeep: false, values: expect.any(Number) });
  });

  test('finds a watched top-level member given twice, however it is spelled, and nothing nested', () => {
    expect(scanJsonShape('{"model":"a","n":1,"model":"b"}', 64, watched)).toEqual({ tooDeep: false, duplicate: 'model', values: expect.any(Number) });
    expect(scanJsonShape('{"model":"a","mod\\u0065l":"b"}', 64, watched)).toEqual({ tooDeep: false, duplicate: 'model', values: expect.any(Number) });
    expect(scanJsonShape('{"stream":true , "x":{"stream":false},"stream":false}', 64, watched)).toEqual({ tooDeep: false, duplicate: 'stream', values: expect.any(Number) });
    expect(scanJsonShape('{"model":"a","x":{"model":"b"},"y":[{"model":"c"}],"note":"\\"model\\":"}', 64, watched)).toEqual({ tooDeep: false, values: expect.any(Number) });
    expect(scanJsonShape('{"other":1,"other":2}', 64, watched)).toEqual({ tooDeep: false, values: expect.any(Number) });
  });

  test('counts values (containers and commas outside strings), and stops past the limit', () => {
    expect(scanJsonShape('{"a":[1,2,{}],"b":"x,y,[z]"}', 8, watched)).toEqual({ tooDeep: false, values: 6 });
    const wide = `{"pad":[${'{},'.repeat(999)}{}]}`;
    expect(scanJsonShape(wide, 8, watched)).toEqual({ tooDeep: false, values: 1_001 + 999 + 1 });
    expect(scanJsonShape(wide, 8, watched, 500)).toEqual({ tooDeep: false, tooManyValues: true, values: 501 });
  });

  test('strings with escaped quotes and backslashes are skipped correctly', () => {
    const body = JSON.stringify({ a: 'say \\"hi\\" \\', model: 'x', b: ['\\', '"'], stream: true });
    expect(scanJsonShape(body, 3, watched)).toEqual({ tooDeep: false, values: expect.any(Number) });
    expect(replaceTopLevelString(body, 'model', 'y')).toBe(body.replace('"model":"x"', '"model":"y"'));
  });
});

describe('removeTopLevelMembers and prependTopLevelMember', () => {
  const body = '{ "model" : "claude-x","stream":true,\n "system":[{"type":"text","text":"a \\"model\\": b","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"thinking","thinking":"t","signature":"Sig+/=="}]}], "max_tokens":1.50e3 ,"metadata":{"stream":1}}';

  test('removes exactly the named members, keeping every other byte (signatures, cache_control, number forms)', () => {
    const out = removeTopLevelMembers(body, new Set(['model', 'stream', 'metadata']));
    expect(out).toBe('{ "system":[{"type":"text","text":"a \\"model\\": b","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"thinking","thinking":"t","signature":"Sig+/=="}]}], "max_tokens":1.50e3}');
    expect(JSON.parse(out)).toEqual({ system: JSON.parse(body).system, messages: JSON.parse(body).messages, max_tokens: 1500 });
  });

  test('first, middle, last and only members; absent ones; duplicates', () => {
    expect(removeTopLevelMembers('{"a":1,"b":2,"c":3}', new Set(['a']))).toBe('{"b":2,"c":3}');
    expect(removeTopLevelMembers('{"a":1,"b":2,"c":3}', new Set(['b']))).toBe('{"a":1,"c":3}');
    expect(removeTopLevelMembers('{"a":1,"b":2,"c":3}', new Set(['c']))).toBe('{"a":1,"b":2}');
    expect(removeTopLevelMembers('{"a":1}', new Set(['a']))).toBe('{}');
    expect(removeTopLevelMembers('{"a":1,"b":2}', new Set(['x']))).toBe('{"a":1,"b":2}');
    expect(removeTopLevelMembers('{"a":1,"b":2,"a":3}', new Set(['a']))).toBe('{"b":2}');
    expect(removeTopLevelMembers('{"a":1,"b":2,"c":3}', new Set(['a', 'c']))).toBe('{"b":2}');
  });

  test('a member is prepended before all others, or alone', () => {
    expect(prependTopLevelMember('{"a":1}', 'v', '"x"')).toBe('{"v":"x","a":1}');
    expect(prependTopLevelMember(' { } ', 'v', '["a"]')).toBe(' {"v":["a"] } ');
    expect(topLevelKeys(body)).toEqual(['model', 'stream', 'system', 'messages', 'max_tokens', 'metadata']);
  });
});
