import { LightHeaders, LightResponse } from '../../../lambda/upstream/light-response.ts';

/** The members the gateway reads must behave as fetch's own Headers and Response do. */
describe('LightHeaders reads like fetch Headers', () => {
  const pairs: [string, string][] = [
    ['Content-Type', 'text/event-stream'],
    ['x-ratelimit-remaining', '9'],
    ['Request-Id', 'req_1'],
    ['Vary', 'accept'],
    ['vary', 'origin'],
  ];
  const light = new LightHeaders(pairs);
  const fetched = new Headers();
  for (const [name, value] of pairs) fetched.append(name, value);

  test('get and has ignore case; repeated names are joined', () => {
    for (const name of ['content-type', 'CONTENT-TYPE', 'vary', 'Request-Id', 'missing']) {
      expect(light.get(name)).toBe(fetched.get(name));
      expect(light.has(name)).toBe(fetched.has(name));
    }
  });

  test('iteration, entries, keys, values and forEach give the same pairs in the same order', () => {
    expect([...light]).toEqual([...fetched]);
    expect([...light.entries()]).toEqual([...fetched.entries()]);
    expect([...light.keys()]).toEqual([...fetched.keys()]);
    expect([...light.values()]).toEqual([...fetched.values()]);
    const seen: string[] = [];
    light.forEach((value, name) => seen.push(`${name}=${value}`));
    const expected: string[] = [];
    fetched.forEach((value, name) => expected.push(`${name}=${value}`));
    expect(seen).toEqual(expected);
  });

  test('a record initialises it as it does Headers', () => {
    expect([...new LightHeaders({ B: '2', a: '1' })]).toEqual([...new Headers({ B: '2', a: '1' })]);
  });
});

describe('LightResponse reads like a fetch Response', () => {
  const chunks = ['{"a":', '1,"text":"é"}'];
  const stream = () =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
        controller.close();
      },
    });

  test.each([200, 204, 299, 300, 404, 529])('status %d: ok as fetch says', (status) => {
    const body = status === 204 ? null : 'x';
    expect(new LightResponse(body, { status, headers: {} }).ok).toBe(new Response(body, { status }).ok);
  });

  test('text, json and arrayBuffer read the whole body, once', async () => {
    expect(await new LightResponse(stream(), { status: 200, headers: {} }).text()).toBe(await new Response(stream()).text());
    expect(await new LightResponse(stream(), { status: 200, headers: {} }).json()).toEqual(await new Response(stream()).json());
    expect(new Uint8Array(await new LightResponse(stream(), { status: 200, headers: {} }).arrayBuffer())).toEqual(new Uint8Array(await new Response(stream()).arrayBuffer()));
    const once = new LightResponse('abc', { status: 200, headers: {} });
    expect(once.bodyUsed).toBe(false);
    expect(await once.text()).toBe('abc');
    expect(once.bodyUsed).toBe(true);
    await expect(once.text()).rejects.toThrow(TypeError);
  });

  test('a string body is also readable as a stream; no body reads as empty', async () => {
    const response = new LightResponse('hello', { status: 200, statusText: 'OK', headers: { 'content-type': 'text/plain' } });
    expect(response.statusText).toBe('OK');
    expect(response.headers.get('Content-Type')).toBe('text/plain');
    const read: string[] = [];
    for await (const chunk of response.body as ReadableStream<Uint8Array>) read.push(Buffer.from(chunk).toString());
    expect(read.join('')).toBe('hello');
    expect(await new LightResponse(null, { status: 204, headers: {} }).text()).toBe('');
  });

  test('a body source is read whole without its stream, or relayed as its stream once asked for', async () => {
    const made: string[] = [];
    const source = (text: string) => ({
      stream: () => (made.push('stream'), new Response(text).body as ReadableStream<Uint8Array>),
      bytes: async () => (made.push('bytes'), new TextEncoder().encode(text)),
    });
    const whole = new LightResponse(source('{"a":1}'), { status: 200, headers: {} });
    expect(await whole.json()).toEqual({ a: 1 });
    expect(made).toEqual(['bytes']);
    await expect(whole.text()).rejects.toThrow(TypeError);
    const relayed = new LightResponse(source('abc'), { status: 200, headers: {} });
    const body = relayed.body as ReadableStream<Uint8Array>;
    expect(relayed.body).toBe(body);
    expect(await relayed.text()).toBe('abc');
    expect(made).toEqual(['bytes', 'stream']);
  });
});
