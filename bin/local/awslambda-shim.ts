import { Writable } from 'node:stream';
import { streamifyResponse } from '../../lambda/runtime-client/globals.ts';
import { PRELUDE_CONTENT_TYPE } from '../../lambda/runtime-client/response-stream.ts';

/**
 * A stand-in for the two `awslambda` globals the Node.js Lambda runtime provides to streaming
 * handlers. The runtime's `HttpResponseStream.from` writes the metadata (status, headers,
 * cookies) as a JSON prelude and 8 NUL bytes before the first body byte, which the Function URL
 * decodes into the HTTP head; here the front end (function-url-server.ts) is in the same process,
 * so `from` hands it the metadata itself: no encoding, decoding and two extra writes per request.
 * The real prelude is written by the gateway's runtime client (lambda/runtime-client/), whose
 * constants and `streamifyResponse` these are, and exercised under it in test/runtime/.
 */

/** What `HttpResponseStream.from` is given, as Lambda's prelude carries it. */
export interface ResponseMetadata {
  statusCode?: number;
  headers?: Record<string, string>;
  cookies?: string[];
}

export class LocalResponseStream extends Writable {
  contentType = 'application/octet-stream';
  /** Set by `HttpResponseStream.from`: the head the front end sends before the first body byte. */
  metadata: ResponseMetadata | undefined;
  #started = false;
  readonly #sink: (chunk: Buffer, done: () => void) => void;

  /** `sink` receives the body bytes and calls `done` when it can take more. */
  constructor(sink: (chunk: Buffer, done: () => void) => void) {
    super();
    this.#sink = sink;
  }

  setContentType(contentType: string): void {
    if (this.#started) throw new Error('Cannot set content-type, too late.');
    this.contentType = contentType;
  }

  override _write(chunk: Buffer, _encoding: string, callback: (error?: Error | null) => void): void {
    this.#started = true;
    this.#sink(chunk, () => callback());
  }
}

/**
 * Installs the globals unless a real runtime already did. It must augment, not replace: the
 * AWS SDK creates `globalThis.awslambda = {}` on import.
 */
export function installAwsLambdaGlobal(): void {
  const global = globalThis as { awslambda?: Record<string, unknown> };
  if (typeof global.awslambda?.streamifyResponse === 'function') return;
  global.awslambda ??= {};
  Object.assign(global.awslambda, {
    streamifyResponse,
    HttpResponseStream: {
      from(stream: LocalResponseStream, metadata: ResponseMetadata): LocalResponseStream {
        stream.setContentType(PRELUDE_CONTENT_TYPE);
        stream.metadata = metadata;
        return stream;
      },
    },
  });
}
