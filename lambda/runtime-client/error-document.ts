/**
 * The error document Lambda takes from a runtime (`/init/error`, `/invocation/{id}/error`, or
 * base64 in a streamed response's trailer), shaped as AWS's own runtime client shapes it.
 * https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html#runtimes-api-invokeerror
 */
export interface ErrorDocument {
  errorType: string;
  errorMessage: string;
  trace: string[];
}

export function errorDocument(error: unknown): ErrorDocument {
  if (error instanceof Error) return { errorType: error.name || 'Error', errorMessage: error.message, trace: error.stack?.split('\n') ?? [] };
  return { errorType: typeof error, errorMessage: String(error), trace: [] };
}

/** An error type as a header value: printable ASCII only (an error's name is anyone's to set). */
export function headerSafe(value: string): string {
  return value.replace(/[^\x20-\x7e]/g, '?');
}
