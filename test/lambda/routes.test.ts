import { GatewayError } from '../../lambda/errors.ts';
import { familyOfPath, FORM_BODY_BYTES, resolveRoute, speaksOAuth } from '../../lambda/routes.ts';

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
    ['POST', '/second/v1/responses/input_tokens', 'responses_input_tokens'],
    ['POST', '/second/v1/responses/compact', 'responses_compact'],
    ['HEAD', '/first/api/hello', 'probe'],
    ['POST', '//first/v1/messages', 'messages'],
    ['POST', '/first//v1///messages', 'messages'],
    ['POST', '/second//v1/responses', 'responses'],
  ])('%s %s -> %s', (method, path, name) => {
    expect(resolveRoute(method, path).name).toBe(name);
  });

  test('families follow the prefix', () => {
    expect(resolveRoute('POST', '/first/v1/messages').family).toBe('messages');
    expect(resolveRoute('POST', '/second/v1/responses').family).toBe('responses');
    expect(familyOfPath('/first/nope')).toBe('messages');
    expect(familyOfPath('/nope')).toBe('responses');
  });

  test('errors of a path its client mistyped come in that client\'s format', () => {
    expect(familyOfPath('//first/v1/messages')).toBe('messages');
    expect(familyOfPath('/FIRST/v1/messages')).toBe('messages');
    expect(familyOfPath('/First')).toBe('messages');
    expect(familyOfPath('/firstly')).toBe('responses');
    // The endpoint a path ends in says who sent it, whatever base it came under.
    expect(familyOfPath('/v1/messages')).toBe('messages');
    expect(familyOfPath('/second/v1/v1/messages')).toBe('messages');
    expect(familyOfPath('/first/v1/responses')).toBe('responses');
    expect(familyOfPath('/first/v1/models')).toBe('messages');
  });

  // Claude Code shows a 404's message as "There's an issue with the selected model" (2.1.332):
  // a path meant for one of our endpoints under another base gets a 421 that it displays.
  test.each([
    ['/v1/messages', '/first', 'ANTHROPIC_BASE_URL'],
    ['/v1/messages/count_tokens', '/first', 'ANTHROPIC_BASE_URL'],
    ['/second/v1/v1/messages', '/first', 'ANTHROPIC_BASE_URL'],
    ['/FIRST/v1/messages', '/first', 'ANTHROPIC_BASE_URL'],
    ['/first/v1/v1/v1/messages', '/first', 'ANTHROPIC_BASE_URL'],
    ['/responses', '/second/v1', 'base_url'],
    ['/v1/responses', '/second/v1', 'base_url'],
    ['/first/v1/responses', '/second/v1', 'base_url'],
    ['/first/responses/compact', '/second/v1', 'base_url'],
  ])('%s was sent under the wrong base: 421 naming %s', (path, base, setting) => {
    let error: GatewayError | undefined;
    try {
      resolveRoute('POST', path);
    } catch (caught) {
      error = caught as GatewayError;
    }
    expect(error).toMatchObject({ status: 421, kind: 'wrong_base_url', headers: { 'x-should-retry': 'false' } });
    expect(error?.message).toContain(`followed by ${base}.`);
    expect(error?.message).toContain(setting);
    expect(error?.message).toContain(path);
  });

  test('a model list under the wrong base names both lists', () => {
    expect(() => resolveRoute('GET', '/v1/models')).toThrow(expect.objectContaining({ status: 421, message: expect.stringContaining('GET /first/v1/models') }));
  });

  test('dot segments are refused, raw or encoded, rather than resolved differently by each runtime', () => {
    for (const path of ['/second/../first/v1/messages', '/first/./v1/messages', '/first/%2e%2E/second/v1/responses', '/first/v1/%2e/messages']) {
      expect(() => resolveRoute('POST', path)).toThrow(expect.objectContaining({ status: 404 }));
    }
  });

  test('a hostile path is echoed printable and bounded', () => {
    let error: GatewayError | undefined;
    try {
      resolveRoute('POST', `/nope/\u0000\u00ff${'x'.repeat(10_000)}`);
    } catch (caught) {
      error = caught as GatewayError;
    }
    expect(error?.message).toMatch(/^[\x20-\x7e]+$/);
    expect(error?.message.length).toBeLessThan(400);
  });

  test('unknown paths are 404 and wrong methods 405 with an allow header', () => {
    expect(() => resolveRoute('POST', '/first/v1/complete')).toThrow(expect.objectContaining({ status: 404 }));
    expect(() => resolveRoute('POST', '/firstly/v1/complete')).toThrow(expect.objectContaining({ status: 404 }));
    expect(() => resolveRoute('POST', '/first/v1/chat/completions')).toThrow(expect.objectContaining({ status: 404 }));
    let error: GatewayError | undefined;
    try {
      resolveRoute('GET', '/first/v1/messages');
    } catch (caught) {
      error = caught as GatewayError;
    }
    expect(error).toMatchObject({ status: 405, headers: { allow: 'POST', 'x-should-retry': 'false' } });
  });
});

describe('sign-in routes', () => {
  const identity = { identity: true };

  test.each([
    ['GET', '/.well-known/oauth-authorization-server', 'metadata'],
    ['GET', '/.well-known/oauth-authorization-server/first', 'metadata'],
    ['GET', '/first/.well-known/oauth-authorization-server', 'metadata'],
    ['GET', '//first//.well-known/oauth-authorization-server/', 'metadata'],
    ['POST', '/oauth/device_authorization', 'device_authorization'],
    ['POST', '/first/oauth/device_authorization', 'device_authorization'],
    ['POST', '/oauth/token', 'token'],
    ['POST', '/first/oauth/token', 'token'],
    ['POST', '/oauth/revoke', 'revoke'],
    ['GET', '/device', 'device'],
    ['POST', '/device', 'device'],
    ['GET', '/oauth/callback', 'callback'],
  ])('%s %s -> identity %s, open, with the form allowance', (method, path, endpoint) => {
    const route = resolveRoute(method, path, identity);
    expect(route).toMatchObject({ name: 'identity', identity: { endpoint, bearer: false }, maxBodyBytes: FORM_BODY_BYTES });
  });

  test('GET /login/helper.mjs -> identity helper, open, without a body', () => {
    expect(resolveRoute('GET', '/login/helper.mjs', identity)).toEqual({ name: 'identity', family: 'responses', identity: { endpoint: 'helper', bearer: false }, maxBodyBytes: 0 });
    expect(() => resolveRoute('POST', '/login/helper.mjs', identity)).toThrow(expect.objectContaining({ status: 405, headers: expect.objectContaining({ allow: 'GET' }) }));
  });

  test('only when sign-in is configured; model routes are unchanged either way', () => {
    expect(() => resolveRoute('POST', '/oauth/token')).toThrow(expect.objectContaining({ status: 404 }));
    expect(() => resolveRoute('GET', '/login/helper.mjs')).toThrow(expect.objectContaining({ status: 404 }));
    expect(() => resolveRoute('GET', '/first/.well-known/oauth-authorization-server')).toThrow(expect.objectContaining({ status: 404 }));
    expect(resolveRoute('POST', '/first/v1/messages', identity).name).toBe('messages');
  });

  test('a wrong method is a 405 naming the allowed ones; dot segments stay refused', () => {
    expect(() => resolveRoute('GET', '/oauth/token', identity)).toThrow(expect.objectContaining({ status: 405, headers: expect.objectContaining({ allow: 'POST' }) }));
    expect(() => resolveRoute('POST', '/oauth/callback', identity)).toThrow(expect.objectContaining({ status: 405 }));
    expect(() => resolveRoute('POST', '/first/../oauth/token', identity)).toThrow(expect.objectContaining({ status: 404 }));
  });

  test('the OAuth endpoints\' refusals are OAuth errors; pages and model routes are not', () => {
    for (const path of ['/oauth/token', '/oauth/token/', '//oauth/revoke', '/first/oauth/device_authorization', '/.well-known/oauth-authorization-server']) expect(speaksOAuth(path)).toBe(true);
    for (const path of ['/device', '/oauth/callback', '/first/v1/messages', '/oauth', '/oauth/tokens']) expect(speaksOAuth(path)).toBe(false);
  });
});
