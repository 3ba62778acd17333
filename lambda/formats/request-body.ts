import type * as Zlib from 'node:zlib';
import { GatewayError, printable } from '../errors.ts';

type Decoder = (options?: Zlib.ZlibOptions) => NodeJS.ReadWriteStream;

/**
 * Content-Encodings a request body may use. Codex may compress its request bodies (zstd), and
 * any HTTP client may gzip them. Lambda and the local server both hand compressed bodies over
 * as base64, so this is the one place they are decoded. The zlib function is looked up when a
 * compressed body arrives: most requests are not compressed, and nothing here should cost a cold
 * start anything (node:util's ES facade alone loads worker_threads and parseArgs).
 */
const DECODERS: Record<string, keyof typeof Zlib> = {
  gzip: 'createGunzip',
  'x-gzip': 'createGunzip',
  deflate: 'createInflate',
  br: 'createBrotliDecompress',
  zstd: 'createZstdDecompress',
};

/** Takes memory for decoded bytes from the runtime's budget (request-state.ts BodyMemory); false when it is spent. */
export type TakeBytes = (bytes: number) => boolean;

/** The answer when the runtime's budget for request bodies is spent: retry shortly (503). */
export function tooManyBodies(): GatewayError {
  return new GatewayError('overloaded', 'The gateway is holding too many request bodies at once; retry shortly.', { headers: { 'retry-after': '1' } });
}

/**
 * The request body as text: base64 undone, a Content-Encoding decoded. The decoded size is
 * capped at `maxBytes` while decoding, so a decompression bomb stops at the cap (413) instead of
 * filling memory; each decoded chunk is charged to `take` as it comes out (503 when the runtime's
 * budget is spent), so the bytes a small compressed body grows into count like received ones.
 */
export async function requestBodyText(body: string, isBase64Encoded: boolean | undefined, contentEncoding: string | undefined, maxBytes: number, take?: TakeBytes): Promise<string> {
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
    bytes = await decode(process.getBuiltinModule('node:zlib')[decoder] as Decoder, encoding, bytes, maxBytes, take);
  }
  return bytes.toString('utf8');
}

/** One encoding undone, as a stream: stopped at the first chunk past `maxBytes` or the budget. */
function decode(createDecoder: Decoder, encoding: string, input: Buffer, maxBytes: number, take: TakeBytes | undefined): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const stream = createDecoder();
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (error: GatewayError) => {
      stream.removeAllListeners('data');
      (stream as unknown as { destroy(): void }).destroy();
      reject(error);
    };
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) return fail(new GatewayError('request_too_large', `Request body decompresses to more than ${maxBytes} bytes; the limit is ${maxBytes} bytes.`));
      if (take !== undefined && !take(chunk.length)) return fail(tooManyBodies());
      chunks.push(chunk);
    });
    stream.on('error', () => reject(new GatewayError('invalid_request', `Request body is not valid ${encoding} data (Content-Encoding: ${encoding}).`)));
    stream.on('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)));
    stream.end(input);
  });
}
