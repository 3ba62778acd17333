import type { AwsCredentialIdentityProvider } from '@smithy/types';
import { nodeHttpText } from '../upstream/node-http-fetch.ts';
import { signAwsRequest } from './signer.ts';

/**
 * One call of an AWS service speaking the JSON protocol (DynamoDB's 1.0, Secrets Manager's 1.1):
 * a signed POST of the operation's input, its output parsed. The request path needs a handful of
 * operations, and this is a few lines on the gateway's own keep-alive HTTP client, where the SDK
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

export async function awsJsonCall<O>(service: AwsJsonService, operation: string, input: unknown, attempts = 2): Promise<O> {
  const url = `${awsEndpoint(service.service, service.region, service.endpoint)}/`;
  const body = JSON.stringify(input);
  const headers = { 'content-type': `application/x-amz-json-${service.jsonVersion}`, 'x-amz-target': `${service.targetPrefix}.${operation}` };
  for (let attempt = 1; ; attempt++) {
    let failure: AwsServiceError;
    try {
      const signed = await signAwsRequest({ service: service.service, region: service.region }, { method: 'POST', url, headers, body }, service.credentials);
      const { status, text } = await nodeHttpText(url, { method: 'POST', headers: signed, body });
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
