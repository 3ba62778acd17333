import { createHash, createHmac } from 'node:crypto';
import type http from 'node:http';

/** Why a request's signature was refused, as the AWS service would answer it. */
export interface SignatureProblem {
  status: number;
  type: string;
  message: string;
}

/**
 * SigV4 (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html): the
 * canonical request over the path as received with each segment encoded again (non-S3 services),
 * the sorted query, the signed headers and the payload hash; scope date/region/service.
 */
export function verifySignature(req: Pick<http.IncomingMessage, 'method' | 'url' | 'headers'>, body: Buffer, secrets: Map<string, string>, want: { region: string; service: string }): SignatureProblem | undefined {
  const region = want.region;
  const authorization = req.headers.authorization ?? '';
  const parsed = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(authorization);
  if (!parsed) return { status: 403, type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  const [, accessKeyId, date, scopeRegion, service, signedHeaders, signature] = parsed as unknown as string[];
  const secret = secrets.get(accessKeyId as string);
  if (!secret) return { status: 403, type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  if (service !== want.service || scopeRegion !== region || !amzDate.startsWith(date as string)) return { status: 403, type: 'InvalidSignatureException', message: 'Credential should be scoped to a valid region and service.' };
  const target = req.url ?? '/';
  const [path = '/', query = ''] = target.split('?');
  const canonicalUri = path
    .split('/')
    .map((segment) => encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('/');
  const canonicalQuery = query
    .split('&')
    .filter(Boolean)
    .map((pair) => pair.split('=').map((part) => encodeURIComponent(decodeURIComponent(part))).join('='))
    .sort()
    .join('&');
  const names = (signedHeaders as string).split(';');
  const canonicalHeaders = names.map((name) => `${name}:${String(req.headers[name] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const payloadHash = createHash('sha256').update(body).digest('hex');
  const declared = req.headers['x-amz-content-sha256'];
  if (declared !== undefined && declared !== payloadHash) return { status: 400, type: 'InvalidSignatureException', message: 'The provided x-amz-content-sha256 header does not match what was computed.' };
  const canonicalRequest = [req.method, canonicalUri, canonicalQuery, canonicalHeaders, signedHeaders, payloadHash].join('\n');
  const scope = `${date}/${scopeRegion}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
  const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${secret}`, date as string), scopeRegion as string), service as string), 'aws4_request');
  const expected = createHmac('sha256', signingKey).update(stringToSign).digest('hex');
  if (expected !== signature) {
    return { status: 403, type: 'InvalidSignatureException', message: 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.' };
  }
  if (!names.includes('host') || !names.includes('x-amz-date')) return { status: 403, type: 'InvalidSignatureException', message: "'Host' and 'X-Amz-Date' must be signed." };
  return undefined;
}
