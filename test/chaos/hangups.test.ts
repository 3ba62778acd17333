import { useChaosGateway } from './support/lifecycle.ts';
import { closedWithin } from './support/providers.ts';
import { requestHead } from './support/raw-http.ts';
import { bodyFor, type Family } from './support/requests.ts';

/**
 * Issue "Hardening", item 1: no client behaviour stops the server. A client hangs up at every
 * phase of a request, on every kind of route, with a key and without; the process must stay up
 * and serve the next request, the request's log line must say `client_closed` (499 when no answer
 * had started), and an upstream call in progress must be cancelled.
 */
const chaos = useChaosGateway();

interface RouteCase {
  path: string;
  family: Family;
  /** Which scripted provider its models go to (`anth-...` or `oai-...`). */
  provider: 'anth' | 'oai';
  streams: boolean;
}

const ROUTES: Record<string, RouteCase> = {
  '/first/v1/messages': { path: '/first/v1/messages', family: 'messages', provider: 'anth', streams: true },
  '/first/v1/messages/count_tokens': { path: '/first/v1/messages/count_tokens', family: 'messages', provider: 'anth', streams: false },
  '/second/v1/responses': { path: '/second/v1/responses', family: 'responses', provider: 'oai', streams: true },
  'translated: Messages client on an OpenAI-Responses upstream': { path: '/first/v1/messages', family: 'messages', provider: 'oai', streams: true },
  'translated: Responses client on an Anthropic upstream': { path: '/second/v1/responses', family: 'responses', provider: 'anth', streams: true },
};
const SAME_FORMAT = ['/first/v1/messages', '/first/v1/messages/count_tokens', '/second/v1/responses'];
const STREAMING = Object.keys(ROUTES).filter((name) => ROUTES[name]?.streams);

let counter = 0;

/** A request of the route as bytes; the marker in its text identifies it at the upstream. */
function request(route: RouteCase, behaviour: string, authenticated: boolean, stream: boolean): { head: string; body: string; marker: string; model: string } {
  const marker = `chaos-case-${++counter}-${Date.now()}`;
  const extra = route.path.endsWith('count_tokens') ? {} : { stream };
  const model = `${route.provider}-${behaviour}-${counter}`;
  const parsed = bodyFor(route.family, model, `please answer ${marker}`, extra);
  if (route.path.endsWith('count_tokens')) delete parsed.max_tokens;
  const body = JSON.stringify(parsed);
  const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
  if (authenticated) headers.authorization = `Bearer ${chaos.gateway.key}`;
  return { head: requestHead('POST', route.path, headers), body, marker, model };
}

/** The upstream request a case caused, once the stub has it. */
async function upstreamRequest(route: RouteCase, marker: string) {
  const stub = route.provider === 'anth' ? chaos.providers.anthropic : chaos.providers.openai;
  await chaos.gateway.waitFor(() => stub.requests.some((recorded) => recorded.body.includes(marker)), `the upstream to receive ${marker}`);
  return stub.requests.find((recorded) => recorded.body.includes(marker)) as (typeof stub.requests)[number];
}

/** An authenticated request of the route sent whole, once the upstream has it: the start of every hang-up after the request. */
async function sentToUpstream(route: RouteCase, behaviour: string, stream: boolean) {
  const { head, body, marker, model } = request(route, behaviour, true, stream);
  const mark = chaos.gateway.mark();
  const connection = await chaos.gateway.connect();
  await connection.write(head + body);
  const upstream = await upstreamRequest(route, marker);
  return { connection, upstream, mark, model };
}

/**
 * The log line of the hung-up request says the client left. It is the first line after `mark`
 * with no model (the body was never parsed) or with this request's model.
 */
async function expectClientClosed(mark: number, model: string, options: { answerStarted: boolean; authenticated: boolean }): Promise<void> {
  const line = await chaos.gateway.nextLine(mark, (candidate) => candidate.model === undefined || candidate.model === model);
  const acceptable = options.authenticated
    ? line.outcome === 'client_closed' && (options.answerStarted || line.status === 499)
    : // Without a key the 401 is decided from the head alone: it may be on its way before the hang-up is seen.
      (line.outcome === 'client_closed' && line.status === 499) || line.status === 401;
  if (!acceptable) {
    const wanted = options.authenticated ? `outcome "client_closed"${options.answerStarted ? '' : ', status 499'}` : 'outcome "client_closed" (499) or a 401';
    throw new Error(`expected the request's log line to say ${wanted}, got: ${line.raw}`);
  }
}

/**
 * Lets the head reach the server before hanging up. Nothing the server does is visible to the
 * client at this point (it waits for the body), so this is the one place a short pause stands in
 * for a condition.
 */
const headArrives = () => new Promise((resolve) => setTimeout(resolve, 250));

describe('1. hang-ups before the request is complete', () => {
  test.each(['/first/v1/messages', '/second/v1/responses'])('before the head completes (%s): the server stays up', async (path) => {
    const connection = await chaos.gateway.connect();
    await connection.write(`POST ${path.slice(0, 9)}`);
    connection.reset();
    await connection.closed;
    await chaos.gateway.probe('after a client hung up before its request line was complete');
  });

  test.each([
    ['/first/v1/messages', true],
    ['/second/v1/responses', false],
  ])('mid-head (%s, authenticated %s): the server stays up', async (path, authenticated) => {
    const connection = await chaos.gateway.connect();
    await connection.write(`POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n${authenticated ? `authorization: Bearer ${chaos.gateway.key}\r\n` : ''}content-len`);
    connection.reset();
    await connection.closed;
    await chaos.gateway.probe('after a client hung up in the middle of its request head');
  });

  const uploads = Object.keys(ROUTES).flatMap((route) => [true, false].map((authenticated) => [route, authenticated] as const));

  test.each(uploads)('head received, body announced but not sent, then reset (%s, authenticated %s)', async (name, authenticated) => {
    const route = ROUTES[name] as RouteCase;
    const { head, model } = request(route, 'ok', authenticated, false);
    const mark = chaos.gateway.mark();
    const connection = await chaos.gateway.connect();
    await connection.write(head);
    await headArrives();
    connection.reset();
    await expectClientClosed(mark, model, { answerStarted: false, authenticated });
    await chaos.gateway.probe('after a client announced a body and reset');
  });

  test.each(uploads)('mid-upload, then reset (%s, authenticated %s)', async (name, authenticated) => {
    const route = ROUTES[name] as RouteCase;
    const { head, body, model } = request(route, 'ok', authenticated, false);
    const mark = chaos.gateway.mark();
    const connection = await chaos.gateway.connect();
    await connection.write(head + body.slice(0, Math.floor(body.length / 2)));
    await headArrives();
    connection.reset();
    await expectClientClosed(mark, model, { answerStarted: false, authenticated });
    await chaos.gateway.probe('after a client reset in the middle of its upload');
  });
});

describe('1. hang-ups after the request was sent', () => {
  test.each(Object.keys(ROUTES))('while the upstream has not answered yet (%s): 499, upstream call cancelled', async (name) => {
    const route = ROUTES[name] as RouteCase;
    const { connection, upstream, mark, model } = await sentToUpstream(route, 'hold', route.streams);
    connection.reset();
    await expectClientClosed(mark, model, { answerStarted: false, authenticated: true });
    expect(await closedWithin(upstream, 2_000)).toBe(true);
    await chaos.gateway.probe('after a client hung up while the upstream was thinking');
  });

  test.each(SAME_FORMAT)('while a non-streamed answer is being read from the upstream (%s): 499, upstream call cancelled', async (name) => {
    const route = ROUTES[name] as RouteCase;
    // The upstream sends its head and half its JSON, then nothing: the gateway is reading the answer.
    const { connection, upstream, mark, model } = await sentToUpstream(route, 'halfjson', false);
    connection.reset();
    await expectClientClosed(mark, model, { answerStarted: false, authenticated: true });
    expect(await closedWithin(upstream, 2_000)).toBe(true);
    await chaos.gateway.probe('after a client hung up while the upstream was sending a non-streamed answer');
  });

  test.each(SAME_FORMAT)('while a non-streamed answer is being written to the client (%s)', async (name) => {
    const route = ROUTES[name] as RouteCase;
    // 16 MB of answer: more than the loopback buffers hold, so the server is still writing when the client goes.
    const { head, body, model } = request(route, 'bigjson', true, false);
    const mark = chaos.gateway.mark();
    const connection = await chaos.gateway.connect();
    connection.pauseOnHead();
    await connection.write(head + body);
    const answer = await connection.head(10_000);
    expect(answer.status).toBe(200);
    connection.reset();
    await expectClientClosed(mark, model, { answerStarted: true, authenticated: true });
    await chaos.gateway.probe('after a client hung up while its answer was being written');
  });

  test.each(STREAMING)('mid-stream (%s): upstream call cancelled', async (name) => {
    const route = ROUTES[name] as RouteCase;
    const { connection, upstream, mark, model } = await sentToUpstream(route, 'drip', true);
    const answer = await connection.head(10_000);
    expect(answer.status).toBe(200);
    await chaos.gateway.waitFor(() => connection.received.includes('data:'), 'the first streamed event');
    connection.reset();
    await expectClientClosed(mark, model, { answerStarted: true, authenticated: true });
    expect(await closedWithin(upstream, 2_000)).toBe(true);
    await chaos.gateway.probe('after a client hung up in the middle of a stream');
  });
});

describe('1. a hang-up after the terminal event is a delivered answer', () => {
  // Codex drops the connection once it has read response.completed, often before the last
  // chunk of the body: the answer and its usage were delivered, so the outcome is ok.
  const TERMINAL: Record<Family, string> = { messages: 'event: message_stop', responses: 'event: response.completed' };

  test.each(STREAMING)('%s: outcome ok with the usage the upstream reported, upstream call closed', async (name) => {
    const route = ROUTES[name] as RouteCase;
    const { connection, upstream, mark, model } = await sentToUpstream(route, 'linger', true);
    await chaos.gateway.waitFor(() => connection.received.includes(TERMINAL[route.family]), 'the terminal event');
    connection.reset();
    const line = await chaos.gateway.nextLine(mark, (candidate) => candidate.model === model);
    expect(line).toMatchObject({ status: 200, outcome: 'ok' });
    expect(line.usageEstimated).toBeUndefined();
    expect(line.usage).toMatchObject({ inputTokens: expect.any(Number), outputTokens: expect.any(Number) });
    expect(await closedWithin(upstream, 2_000)).toBe(true);
    await chaos.gateway.probe('after a client hung up right after the terminal event');
  });
});

describe('1. orderly closes (FIN) instead of resets', () => {
  const route = ROUTES['/first/v1/messages'] as RouteCase;

  test('mid-upload', async () => {
    const { head, body, model } = request(route, 'ok', true, false);
    const mark = chaos.gateway.mark();
    const connection = await chaos.gateway.connect();
    await connection.write(head + body.slice(0, 20));
    await headArrives();
    connection.destroy();
    await expectClientClosed(mark, model, { answerStarted: false, authenticated: true });
    await chaos.gateway.probe('after a client closed in the middle of its upload');
  });

  test('while the upstream has not answered yet', async () => {
    const { connection, upstream, mark, model } = await sentToUpstream(route, 'hold', true);
    connection.destroy();
    await expectClientClosed(mark, model, { answerStarted: false, authenticated: true });
    expect(await closedWithin(upstream, 2_000)).toBe(true);
    await chaos.gateway.probe('after a client closed while the upstream was thinking');
  });

  test('mid-stream', async () => {
    const { connection, upstream, mark, model } = await sentToUpstream(route, 'drip', true);
    await chaos.gateway.waitFor(() => connection.received.includes('data:'), 'the first streamed event');
    connection.destroy();
    await expectClientClosed(mark, model, { answerStarted: true, authenticated: true });
    expect(await closedWithin(upstream, 2_000)).toBe(true);
    await chaos.gateway.probe('after a client closed in the middle of a stream');
  });
});
