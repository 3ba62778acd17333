import type { InvocationResponseStream } from './response-stream.ts';

/** The mark `awslambda.streamifyResponse` puts on a handler (AWS's runtime client reads the same one). */
export const STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming');

/** `awslambda.streamifyResponse`: marks a handler as one that takes a response stream. */
export function streamifyResponse<T extends object>(handler: T): T {
  Object.defineProperty(handler, STREAMING, { value: 'response' });
  return handler;
}

/**
 * The two `awslambda` globals streaming handlers call (middy's streaming mode among them), as
 * AWS's runtime client defines them. They augment what is there: the AWS SDK creates
 * `globalThis.awslambda = {}` on import.
 */
export function installGlobals(): void {
  const global = globalThis as { awslambda?: Record<string, unknown> };
  global.awslambda = {
    ...global.awslambda,
    streamifyResponse,
    HttpResponseStream: { from: (stream: InvocationResponseStream, metadata: unknown) => stream.withPrelude(metadata) },
  };
}
