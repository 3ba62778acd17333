import { useChaosGateway } from './support/lifecycle.ts';
import { requestHead } from './support/raw-http.ts';
import { expectError, expectStatus, jsonHeaders, messagesBody, responsesBody, send, type Family } from './support/requests.ts';

/**
 * Issue "Hardening", items 8-10: odd paths get the right route or the right format's 404, errors
 * Node raises itself are answered properly, and the endpoints Codex and Claude Code call besides
 * the main two work.
 */
const chaos = useChaosGateway();

describe('8. paths', () => {
  test('//first/v1/messages is served like /first/v1/messages', async () => {
    const answer = await send(chaos.gateway.url, '//first/v1/messages', { headers: jsonHeaders(chaos.gateway.key), body: JSON.stringify(messagesBody('sim-path')) });
    expectStatus(answer, 200, '//first/v1/messages');
    expect(answer.json()).toMatchObject({ type: 'message', role: 'assistant' });
  });

  test('/second//v1/responses is served like /second/v1/responses', async () => {
    const answer = await send(chaos.gateway.url, '/second//v1/responses', { headers: jsonHeaders(chaos.gateway.key, 'responses'), body: JSON.stringify(responsesBody('sim-path')) });
    expectStatus(answer, 200, '/second//v1/responses');
    expect(answer.json()).toMatchObject({ object: 'response', status: 'completed' });
  });

  test.each([
    ['/FIRST/v1/messages', 'messages', 421],
    ['/first/v1/nope', 'messages', 404],
    ['/second/nope', 'responses', 404],
  ] as const)('%s is answered in the %s error format (%i)', async (path, family, status) => {
    const answer = await send(chaos.gateway.url, path, { headers: jsonHeaders(chaos.gateway.key, family), body: JSON.stringify(messagesBody('sim-path')) });
    expectError(answer, family, status);
  });
});

describe('9. errors Node raises itself', () => {
  test.each([
    ['/first/v1/messages', 'messages'],
    ['/second/v1/responses', 'responses'],
  ] as const)('a 100 KB header on %s is a 431 with a JSON body in the %s format', async (path, family) => {
    const connection = await chaos.gateway.connect();
    await connection.write(requestHead('POST', path, { authorization: `Bearer ${chaos.gateway.key}`, 'content-type': 'application/json', 'x-padding': 'p'.repeat(100 * 1024), 'content-length': 2 }) + '{}');
    const answer = await connection.response(5_000).finally(() => connection.destroy());
    expect(answer.headers['content-type']).toMatch(/json/);
    expectError(answer, family as Family, 431);
    await chaos.gateway.probe('after a 100 KB header');
  });

  test.each(['HELLO\r\n\r\n', 'POST /first/v1/mess ages HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n', 'POST /first/v1/messages HTTP/1.1\r\nhost 127.0.0.1\r\n\r\n', '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03'])(
    'a malformed request (%j) is a 400 and the server stays up',
    async (raw) => {
      const connection = await chaos.gateway.connect();
      await connection.write(Buffer.from(raw, 'latin1'));
      const answer = await connection.response(5_000).finally(() => connection.destroy());
      expect(answer.status).toBe(400);
      await chaos.gateway.probe('after a malformed request');
    },
  );
});

describe('10. the other endpoints clients call', () => {
  test.each(['input_tokens', 'compact'])('POST /second/v1/responses/%s passes through to an openai upstream, body unchanged', async (operation) => {
    const body = JSON.stringify({ model: `oai-ok-${operation}`, input: [{ role: 'user', content: `count ${operation} please` }], instructions: 'be brief' });
    const answer = await send(chaos.gateway.url, `/second/v1/responses/${operation}`, { headers: jsonHeaders(chaos.gateway.key, 'responses'), body });
    expectStatus(answer, 200, `POST /second/v1/responses/${operation}`);
    const received = chaos.providers.openai.requests.find((request) => request.body === body);
    if (received === undefined) throw new Error(`the openai upstream did not receive the body unchanged; it got ${chaos.providers.openai.requests.map((request) => `${request.method} ${request.url}`).join(', ') || 'nothing'}`);
    expect({ method: received.method, path: new URL(received.url, 'http://x').pathname }).toEqual({ method: 'POST', path: `/v1/responses/${operation}` });
    if (operation === 'input_tokens') expect(answer.json()).toEqual({ object: 'response.input_tokens', input_tokens: 42 });
  });

  test.each([
    ['the simulator', 'sim-count'],
    ['an anthropic upstream', 'anth-ok-count'],
  ])('POST /second/v1/responses/input_tokens on %s is estimated locally', async (_upstream, model) => {
    const before = chaos.providers.anthropic.requests.length;
    const answer = await send(chaos.gateway.url, '/second/v1/responses/input_tokens', { headers: jsonHeaders(chaos.gateway.key, 'responses'), body: JSON.stringify(responsesBody(model, 'how many tokens is this?')) });
    expectStatus(answer, 200, 'input_tokens');
    expect(answer.headers['x-token-count']).toBe('estimated');
    expect(answer.json()).toEqual({ object: 'response.input_tokens', input_tokens: expect.any(Number) });
    expect(answer.json().input_tokens).toBeGreaterThan(0);
    expect(chaos.providers.anthropic.requests.length).toBe(before);
  });

  test.each([
    ['the simulator', 'sim-compact'],
    ['an anthropic upstream', 'anth-ok-compact'],
  ])('POST /second/v1/responses/compact on %s is a 501 in the Responses format', async (_upstream, model) => {
    const answer = await send(chaos.gateway.url, '/second/v1/responses/compact', { headers: jsonHeaders(chaos.gateway.key, 'responses'), body: JSON.stringify(responsesBody(model, 'compact this')) });
    expectError(answer, 'responses', 501);
  });

  test('HEAD /first/api/hello is a 200 without a key', async () => {
    const answer = await send(chaos.gateway.url, '/first/api/hello', { method: 'HEAD' });
    expectStatus(answer, 200, 'HEAD /first/api/hello');
  });
});
