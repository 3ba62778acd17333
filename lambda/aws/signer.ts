import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { awsCredentials } from './credentials.ts';

export interface AwsSigning {
  service: string;
  region: string;
}

export interface RequestToSign {
  method: string;
  /** The full URL, path segments already percent-encoded as sent (a model id is one segment). */
  url: string;
  headers: Record<string, string>;
  body: string;
}

const signers = new Map<string, SignatureV4>();

/** One signer per service and region, over the instance's credential chain. */
function defaultSigner(target: AwsSigning): SignatureV4 {
  const key = `${target.service}\u0000${target.region}`;
  let signer = signers.get(key);
  if (!signer) {
    signer = new SignatureV4({ service: target.service, region: target.region, sha256: Sha256, credentials: awsCredentials() });
    signers.set(key, signer);
  }
  return signer;
}

/**
 * AWS SigV4 over the final request (made last: any header or body change after it would break
 * it). The canonical path is the URL's path encoded once more, as every service but S3 expects,
 * which is also what the AWS SDK does for a model id sent as one encoded segment.
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html
 */
export async function signAwsRequest(target: AwsSigning, request: RequestToSign, credentials?: AwsCredentialIdentityProvider | AwsCredentialIdentity): Promise<Record<string, string>> {
  const signer = credentials === undefined ? defaultSigner(target) : new SignatureV4({ service: target.service, region: target.region, sha256: Sha256, credentials });
  const url = new URL(request.url);
  const signed = await signer.sign({
    method: request.method,
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port ? { port: Number(url.port) } : {}),
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: { ...request.headers, host: url.host },
    body: request.body,
  });
  return signed.headers as Record<string, string>;
}
