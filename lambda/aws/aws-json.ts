import type { AwsCredentialIdentityProvider } from '@smithy/types';
import { postForText } from './kept-alive-post.ts';
import { signAwsRequest } from './signer.ts';

/**
 * One call of an AWS service speaking the JSON protocol (DynamoDB's 1.0, Secrets Manager's 1.1):
 * a signed POST of the operation's input, its output parsed. The request path needs a handful of
 * operations, and this is a few lines on a kept-alive HTTP/1.1 client (kept-alive-post.ts), where the SDK
 * clients cost about 300 kB of bundle and their first call a long initialisation
 * (docs/performance.md). The CLI keeps the SDK (bin/local/sdk-dynamo.ts).
 */
export interface AwsJsonService {
  /** Signing name and the endpoint's service label: `dynamodb`, `secretsmanager`. */
  service: string;
  /** `DynamoDB_20120810`, `secretsmanager`. */
  targetPrefix: string;
  /** `1.0` or `1.1`. */
  jsonVersion: string;
  region: string;
  /** Overrides the public endpoint (the local store, a test fake). */
  endpoint?: string;
  credentials?: AwsCredentialIdentityProvider;
}

/** An error answer of an AWS service, named as the SDK names it (`ConditionalCheckFailedException`...). */
export class AwsServiceError extends Error {
  override readonly name: string;
  readonly status: number;

  constructor(name: string, message: string, status: number) {
    super(message);
    this.name = name;
    this.status = status;
  }
}

const RETRYABLE = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded', 'InternalServerError', 'ServiceUnavailable', 'InternalFailure']);

/** The endpoint the SDK would use: an override, `AWS_ENDPOINT_URL_<SERVICE>`, `AWS_ENDPOINT_URL`, else the public one. */
export function awsEndpoint(service: string, region: string, override?: string): string {
  const env = process.env;
  return (override ?? env[`AWS_ENDPOINT_URL_${service.toUpperCase()}`] ?? env.AWS_ENDPOINT_URL ?? `https://${service}.${region}.amazonaws.com`).replace(/\/+$/, '');
}

/**
 * Retries, as before the kept-alive client: one more attempt (`attempts`, 2), 25-100 ms later,
 * after throttling, a 5xx, or any failure of the connection (a refused connect, a stale kept-alive
 * socket the server had closed, a reset or truncated answer: NetworkingError, status 0), whatever
 * the operation. So an UpdateItem with ADD whose connection failed after the request was written
 * (the service may have applied it) is sent again and may count twice: the AWS SDK's standard
 * retry does the same, and the alternative, a lost usage write, is the worse error for billing.
 * Other 4xx answers are not retried.
 */
export async function awsJsonCall<O>(service: AwsJsonService, operation: string, input: unknown, attempts = 2): Promise<O> {
  const { url, headers } = callTarget(service, operation);
  const body = JSON.stringify(input);
  for (let attempt = 1; ; attempt++) {
    let failure: AwsServiceError;
    try {
      const signed = await signAwsRequest({ service: service.service, region: service.region }, { method: 'POST', url, headers, body }, service.credentials);
      const { status, text } = await postForText(url, signed, body);
      if (status >= 200 && status <= 299) return (text ? JSON.parse(text) : {}) as O;
      failure = errorOf(status, text);
    } catch (error) {
      failure = error instanceof AwsServiceError ? error : new AwsServiceError('NetworkingError', error instanceof Error ? error.message : String(error), 0);
    }
    const retryable = RETRYABLE.has(failure.name) || failure.status >= 500 || failure.status === 0;
    if (!retryable || attempt >= attempts) throw failure;
    await new Promise((resolve) => setTimeout(resolve, 25 + Math.random() * 75));
  }
}

/**
 * The address and the unsigned headers of a service's operation, worked out on its first call
 * (the endpoint from the environment, as the SDK resolves it once per client): two calls per
 * metered request would otherwise read the environment and build them again each time.
 */
const callTargets = new WeakMap<AwsJsonService, { url: string; byOperation: Map<string, Record<string, string>> }>();

function callTarget(service: AwsJsonService, operation: string): { url: string; headers: Record<string, string> } {
  let target = callTargets.get(service);
  if (target === undefined) {
    target = { url: `${awsEndpoint(service.service, service.region, service.endpoint)}/`, byOperation: new Map() };
    callTargets.set(service, target);
  }
  let headers = target.byOperation.get(operation);
  if (headers === undefined) {
    headers = { 'content-type': `application/x-amz-json-${service.jsonVersion}`, 'x-amz-target': `${service.targetPrefix}.${operation}` };
    target.byOperation.set(operation, headers);
  }
  return { url: target.url, headers };
}

function errorOf(status: number, text: string): AwsServiceError {
  let parsed: { __type?: string; message?: string; Message?: string } = {};
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the status
  }
  const name = (parsed.__type ?? `Http${status}`).split('#').pop() as string;
  return new AwsServiceError(name, parsed.message ?? parsed.Message ?? `AWS answered ${status}.`, status);
}
