import { GatewayError } from '../../lambda/errors.ts';
import { familyOfPath, resolveRoute } from '../../lambda/routes.ts';

describe('resolveRoute', () => {
  test.each([
    ['POST', '/first/v1/messages', 'messages'],
    ['POST', '/first/v1/v1/messages', 'messages'],
    ['POST', '/first/v1/messages/', 'messages'],
    ['POST', '/first/v1/messages/count_tokens', 'count_tokens'],
    ['POST', '/first/v1/v1/messages/count_tokens', 'count_tokens'],
    ['GET', '/first/v1/models', 'messages_models'],
    ['HEAD', '/first', 'probe'],
    ['HEAD', '/first/', 'probe'],
    ['POST', '/second/v1/responses', 'responses'],
    ['POST', '/second/responses', 'responses'],
    ['GET', '/second/v1/responses', 'responses_websocket'],
    ['GET', '/second/v1/models', 'responses_models'],
  ])('%s %s -> %s', (method, path, name) => {
    expect(resolveRoute(method, path).name).toBe(name);
  });

  test('families follow the prefix', () => {
    expect(resolveRoute('POST', '/first/v1/messages').family).toBe('messages');
    expect(resolveRoute('POST', '/second/v1/responses').family).toBe('responses');
    expect(familyOfPath('/first/nope')).toBe('messages');
    expect(familyOfPath('/nope')).toBe('responses');
  });

  test('unknown paths are 404 and wrong methods 405 with an allow header', () => {
    expect(() => resolveRoute('POST', '/first/v1/complete')).toThrow(expect.objectContaining({ status: 404 }));
    expect(() => resolveRoute('POST', '/firstly/v1/messages')).toThrow(expect.objectContaining({ status: 404 }));
    expect(() => resolveRoute('POST', '/first/v1/v1/v1/messages')).toThrow(expect.objectContaining({ status: 404 }));
    let error: GatewayError | undefined;
    try {
      resolveRoute('GET', '/first/v1/messages');
    } catch (caught) {
      error = caught as GatewayError;
    }
    expect(error).toMatchObject({ status: 405, headers: { allow: 'POST', 'x-should-retry': 'false' } });
  });
});
