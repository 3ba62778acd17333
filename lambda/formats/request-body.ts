import type * as Zlib from 'node:zlib';
import { GatewayError, printable } from '../errors.ts';

type ZlibDecode = (input: Buffer, options: Zlib.ZlibOptions, callback: (error: Error | null, result: Buffer) => void) => void;

/**
 * Content-Encodings a request body may use. Codex may compress its request bodies (zstd), and
 * any HTTP client may gzip them. Lambda and the local server both hand compressed bodies over
 * as base64, so this is the one place they are decoded. The zlib function is looked up when a
 * compressed body arrives: most requests are not compressed, and nothing here should cost a cold
 * start anything (node:util's ES facade alone loads worker_threads and parseArgs).
 */
const DECODERS: Record<string, keyof typeof Zlib> = {
  gzip: 'gunzip',
  'x-gzip': 'gunzip',
  deflate: 'inflate',
  br: 'brotliDecompress',
  zstd: 'zstdDecompress',
};

function decode(name: keyof typeof Zlib, input: Buffer, maxOutputLength: number): Promise<Buffer> {
  const zlibDecode = process.getBuiltinModule('node:zlib')[name] as ZlibDecode;
  return new Promise((resolve, reject) => zlibDecode(input, { maxOutputLength }, (error, result) => (error ? reject(error) : resolve(result))));
}

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
    const decoder = DECODERS[encoding];
    if (!decoder) {
      throw new GatewayError('unsupported_media_type', `Content-Encoding "${printable(encoding)}" is not supported; use gzip, deflate, br or zstd.`);
    }
    try {
      bytes = await decode(decoder, bytes, maxBytes);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        throw new GatewayError('request_too_large', `Request body decompresses to more than ${maxBytes} bytes; the limit is ${maxBytes} bytes.`);
      }
      throw new GatewayError('invalid_request', `Request body is not valid ${encoding} data (Content-Encoding: ${encoding}).`);
    }
  }
  return bytes.toString('utf8');
}
