import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import zlib from 'node:zlib';
import { useChaosGateway } from './support/lifecycle.ts';
import { expectBelow, sampleRss } from './support/measure.ts';
import { bodyFor, expectError, expectStatus, jsonHeaders, printable, send, type Family } from './support/requests.ts';

/**
 * Issue "Hardening", item 7: compressed request bodies. Today a zstd body gets a 400 whose message
 * is the compressed bytes read as text. The fixed server decodes gzip, deflate, br and zstd (what
 * Node's zlib has), refuses a body that inflates past the size limit at once, and says so plainly.
 */
const chaos = useChaosGateway();

type Encoding = 'gzip' | 'deflate' | 'br' | 'zstd';
const ENCODINGS: Encoding[] = ['gzip', 'deflate', 'br', 'zstd'];

function compressor(encoding: Encoding): zlib.Gzip | zlib.Deflate | zlib.BrotliCompress | zlib.ZstdCompress {
  if (encoding === 'gzip') return zlib.createGzip({ level: 9 });
  if (encoding === 'deflate') return zlib.createDeflate({ level: 9 });
  // Quality 5: the default (11) takes minutes on hundreds of MB.
  if (encoding === 'br') return zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } });
  return zlib.createZstdCompress();
}

function compress(encoding: Encoding, parts: Iterable<Buffer>): Promise<Buffer> {
  return buffer(Readable.from(parts).pipe(compressor(encoding)));
}

const PATHS: Record<Family, string> = { messages: '/first/v1/messages', responses: '/second/v1/responses' };
const BOMB_MB = 300;

describe('7. compressed request bodies', () => {
  const pairs = ENCODINGS.flatMap((encoding) => (['messages', 'responses'] as const).map((family) => [encoding, family] as const));

  test.each(pairs)('content-encoding %s (%s) is decoded: 200, and the upstream gets plain JSON without content-encoding', async (encoding, family) => {
    const model = `${family === 'messages' ? 'anth' : 'oai'}-ok-${encoding}`;
    const json = JSON.stringify(bodyFor(family, model, `compressed with ${encoding}`));
    const stub = family === 'messages' ? chaos.providers.anthropic : chaos.providers.openai;
    const answer = await send(chaos.gateway.url, PATHS[family], { headers: { ...jsonHeaders(chaos.gateway.key, family), 'content-encoding': encoding }, body: await compress(encoding, [Buffer.from(json)]) });
    expectStatus(answer, 200, `a ${encoding} body`);
    const received = stub.requests.find((request) => request.body.includes(`compressed with ${encoding}`) && request.body.includes(model));
    if (received === undefined) throw new Error(`the upstream received no plain JSON body for ${model}; it got: ${stub.requests.slice(-1).map((request) => JSON.stringify(request.body.slice(0, 200)))}`);
    expect(JSON.parse(received.body)).toEqual(JSON.parse(json));
    expect(received.headers['content-encoding']).toBeUndefined();
  });

  test.each(ENCODINGS)(`a %s decompression bomb (${BOMB_MB} MB of JSON whitespace) is a 413 at once, with bounded memory`, async (encoding) => {
    const spaces = Buffer.alloc(1024 * 1024, 0x20);
    const bomb = await compress(encoding, (function* () {
      yield Buffer.from('{"model":"sim-bomb","max_tokens":16,"messages":[');
      for (let i = 0; i < BOMB_MB; i++) yield spaces;
      yield Buffer.from('{"role":"user","content":"hi"}]}');
    })());
    await chaos.gateway.probe('before the bomb');
    const idle = chaos.gateway.rssMb();
    const rss = sampleRss(chaos.gateway);
    const started = Date.now();
    let answer;
    try {
      answer = await send(chaos.gateway.url, '/first/v1/messages', { headers: { ...jsonHeaders(chaos.gateway.key), 'content-encoding': encoding }, body: bomb });
    } finally {
      rss.stop();
    }
    const elapsedMs = Date.now() - started;
    expectError(answer, 'messages', 413);
    expectBelow(elapsedMs, 5_000, `ms to refuse a ${Math.round(bomb.length / 1024)} KB ${encoding} body that inflates to ${BOMB_MB} MB`);
    expectBelow(rss.peakMb - idle, 150, `RSS growth in MB while refusing the ${encoding} bomb (idle ${Math.round(idle)} MB)`);
    await chaos.gateway.probe('after a decompression bomb');
  });

  test('an unknown content-encoding is a 415 in the client format', async () => {
    for (const family of ['messages', 'responses'] as const) {
      const answer = await send(chaos.gateway.url, PATHS[family], { headers: { ...jsonHeaders(chaos.gateway.key, family), 'content-encoding': 'compress' }, body: Buffer.from('\x1f\x9d\x90 not really LZW') });
      expectError(answer, family, 415);
    }
  });

  test.each(ENCODINGS)('corrupt %s data is a 400 whose message is printable ASCII', async (encoding) => {
    const valid = await compress(encoding, [Buffer.from(JSON.stringify(bodyFor('messages', 'sim-corrupt')))]);
    // A valid start, then bytes no decoder accepts.
    const corrupt = Buffer.concat([valid.subarray(0, Math.max(2, valid.length >> 1)), Buffer.from([0xff, 0xfe, 0x00, 0x9c, 0xe2, 0x80, 0x8b, 0x1b])]);
    for (const family of ['messages', 'responses'] as const) {
      const answer = await send(chaos.gateway.url, PATHS[family], { headers: { ...jsonHeaders(chaos.gateway.key, family), 'content-encoding': encoding }, body: corrupt });
      const error = expectError(answer, family, 400);
      if (!/^[\x20-\x7e]+$/.test(error.message)) throw new Error(`the message is not printable ASCII: ${printable(error.message)}`);
    }
    await chaos.gateway.probe('after corrupt compressed bodies');
  });
});
