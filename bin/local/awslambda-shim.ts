import { Writable } from 'node:stream';

/**
 * A stand-in for the two `awslambda` globals the Node.js Lambda runtime provides to streaming
 * handlers, mirroring the runtime's behaviour: `HttpResponseStream.from` writes a JSON prelude
 * and 8 NUL bytes before the first body byte (on the first `write()`, as the runtime does), and
 * the front end (function-url-server.ts) decodes it the way a Function URL does.
 */
export const PRELUDE_CONTENT_TYPE = 'application/vnd.awslambda.http-integration-response';
const STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming');

export class LocalResponseStream extends Writable {
  contentType = 'application/octet-stream';
  beforeFirstWrite: ((write: (chunk: string | Uint8Array) => void) => void) | undefined;
  #started = false;
  readonly #sink: (chunk: Buffer, done: () => void) => void;

  /** `sink` receives the raw bytes (prelude included) and calls `done` when it can take more. */
  constructor(sink: (chunk: Buffer, done: () => void) => void) {
    super();
    this.#sink = sink;
  }

  setContentType(contentType: string): void {
    if (this.#started) throw new Error('Cannot set content-type, too late.');
    this.contentType = contentType;
  }

  override write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    if (!this.#started && this.beforeFirstWrite) {
      this.beforeFirstWrite((prelude) => super.write(prelude));
    }
    this.#started = true;
    return super.write(chunk, encoding as BufferEncoding, callback as () => void);
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
    streamifyResponse<T extends object>(handler: T): T {
      Object.defineProperty(handler, STREAMING, { value: 'response' });
      return handler;
    },
    HttpResponseStream: {
      from(stream: LocalResponseStream, prelude: unknown): LocalResponseStream {
        stream.setContentType(PRELUDE_CONTENT_TYPE);
        const json = JSON.stringify(prelude);
        stream.beforeFirstWrite = (write) => {
          write(json);
          write(new Uint8Array(8));
        };
        return stream;
      },
    },
  });
}
