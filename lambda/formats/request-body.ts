import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { GatewayError, printable } from '../errors.ts';

type Decoder = (input: Buffer, options: { maxOutputLength: number }) => Promise<Buffer>;

/**
 * Content-Encodings a request body may use. Codex may compress its request bodies (zstd), and
 * any HTTP client may gzip them. Lambda and the local server both hand compressed bodies over
 * as base64, so this is the one place they are decoded.
 */
const DECODERS: Record<string, Decoder> = {
  gzip: promisify(zlib.gunzip),
  'x-gzip': promisify(zlib.gunzip),
  deflate: promisify(zlib.inflate),
  br: promisify(zlib.brotliDecompress),
  zstd: promisify(zlib.zstdDecompress),
};

/**
 * The request body as text: base64 undone, a Content-Encoding decoded. The decoded size is
 * capped at `maxBytes` while decoding, so a decompression bomb stops at the cap (413) instead of
 * filling memory.
 */
export async function requestBodyText(body: string, isBase64Encoded: boolean | undefined, contentEncoding: string | undefined, maxBytes: number): Promise<string> {
  const encodings = (contentEncoding ?? '')
    .split(',')
    .map((value) => value.trim().toLowerCase())
    .filter((value) => value !== '' && value !== 'identity');
  if (encodings.length === 0) return isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body;
  let bytes: Buffer = isBase64Encoded ? Buffer.from(body, 'base64') : Buffer.from(body, 'latin1');
  // Encodings are listed in the order they were applied: undo them last to first.
  for (const encoding of encodings.reverse()) {
    const decode = DECODERS[encoding];
    if (!decode) {
      throw new GatewayError('unsupported_media_type', `Content-Encoding "${printable(encoding)}" is not supported; use gzip, deflate, br or zstd.`);
    }
    try {
      bytes = await decode(bytes, { maxOutputLength: maxBytes });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        throw new GatewayError('request_too_large', `Request body decompresses to more than ${maxBytes} bytes; the limit is ${maxBytes} bytes.`);
      }
      throw new GatewayError('invalid_request', `Request body is not valid ${encoding} data (Content-Encoding: ${encoding}).`);
    }
  }
  return bytes.toString('utf8');
}
