import zlib from 'node:zlib';
import { requestBodyText } from '../../../lambda/formats/request-body.ts';

const json = JSON.stringify({ model: 'claude-sonnet-5', messages: [{ role: 'user', content: 'héllo' }] });
const LIMIT = 1024 * 1024;

test.each([
  ['gzip', zlib.gzipSync],
  ['x-gzip', zlib.gzipSync],
  ['deflate', zlib.deflateSync],
  ['br', zlib.brotliCompressSync],
  ['zstd', zlib.zstdCompressSync],
])('a %s body (base64, as both runtimes pass it) is decoded to its text', async (encoding, compress) => {
  const body = compress(Buffer.from(json)).toString('base64');
  await expect(requestBodyText(body, true, encoding, LIMIT)).resolves.toBe(json);
  await expect(requestBodyText(body, true, encoding.toUpperCase(), LIMIT)).resolves.toBe(json);
});

test('stacked encodings are undone last to first; identity and no header leave the text alone', async () => {
  const body = zlib.gzipSync(zlib.zstdCompressSync(Buffer.from(json))).toString('base64');
  await expect(requestBodyText(body, true, 'zstd, gzip', LIMIT)).resolves.toBe(json);
  await expect(requestBodyText(json, false, 'identity', LIMIT)).resolves.toBe(json);
  await expect(requestBodyText(json, false, undefined, LIMIT)).resolves.toBe(json);
  await expect(requestBodyText(Buffer.from(json).toString('base64'), true, undefined, LIMIT)).resolves.toBe(json);
});

test.each([
  ['gzip', zlib.gzipSync],
  ['deflate', zlib.deflateSync],
  ['br', zlib.brotliCompressSync],
  ['zstd', zlib.zstdCompressSync],
])('a %s bomb stops at the cap with 413, without inflating it', async (encoding, compress) => {
  const bomb = compress(Buffer.alloc(64 * 1024 * 1024)).toString('base64');
  const heapBefore = process.memoryUsage().arrayBuffers;
  await expect(requestBodyText(bomb, true, encoding, LIMIT)).rejects.toMatchObject({
    status: 413,
    message: `Request body decompresses to more than ${LIMIT} bytes; the limit is ${LIMIT} bytes.`,
  });
  expect(process.memoryUsage().arrayBuffers - heapBefore).toBeLessThan(32 * 1024 * 1024);
});

test('corrupt data is a 400 whose message is plain text; an unknown encoding is a 415', async () => {
  const corrupt = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff, 0xfe, 0x00, 0x80, 0x81, 0x82]).toString('base64');
  const error = await requestBodyText(corrupt, true, 'gzip', LIMIT).catch((caught: unknown) => caught);
  expect(error).toMatchObject({ status: 400, message: 'Request body is not valid gzip data (Content-Encoding: gzip).' });
  await expect(requestBodyText('x', true, 'compress', LIMIT)).rejects.toMatchObject({ status: 415, message: 'Content-Encoding "compress" is not supported; use gzip, deflate, br or zstd.' });
  await expect(requestBodyText('x', true, 'g\u0000zip\u00ff', LIMIT)).rejects.toMatchObject({ message: expect.stringMatching(/^[\x20-\x7e]+$/) });
});
