import { createHmac, createSecretKey, hash, type KeyObject } from 'node:crypto';
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

/**
 * Headers never signed, as the AWS SDK leaves them out (@smithy/signature-v4's
 * ALWAYS_UNSIGNABLE_HEADERS and its proxy-/sec- patterns): hops and proxies may change them.
 */
const UNSIGNABLE = new Set(['authorization', 'cache-control', 'connection', 'expect', 'from', 'keep-alive', 'max-forwards', 'pragma', 'referer', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'user-agent', 'x-amzn-trace-id']);
/** Headers the signature itself sets: a caller's copy is dropped. */
const GENERATED = new Set(['authorization', 'x-amz-date', 'date']);

/**
 * AWS SigV4 over the final request (made last: any header or body change after it would break
 * it), written on node:crypto: the SDK's signer (@smithy/signature-v4 with its hashing and
 * encoding helpers) is 18 kB of bundle and about 3 ms of CPU for its first signature, both paid by
 * every cold start (docs/performance.md). The output is the SDK signer's, header for header
 * (test/lambda/aws/signer.test.ts compares them): the date, the session token, the payload hash
 * (`x-amz-content-sha256`) and the authorization header, over every header but the unsignable
 * ones. The canonical path is the URL's path with `.`/`..`/empty segments resolved and encoded once
 * more, as every service but S3 expects (a model id sent as one encoded segment stays one).
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html
 */
export async function signAwsRequest(target: AwsSigning, request: RequestToSign, credentials?: AwsCredentialIdentityProvider | AwsCredentialIdentity, now = new Date()): Promise<Record<string, string>> {
  const identity = credentials === undefined ? await awsCredentials()() : typeof credentials === 'function' ? await credentials() : credentials;
  if (typeof identity?.accessKeyId !== 'string' || typeof identity.secretAccessKey !== 'string') throw new Error('Resolved credential object is not valid');
  const target_ = requestTarget(request.url);
  const longDate = amzDate(now);
  const shortDate = longDate.slice(0, 8);
  const scope = `${shortDate}/${target.region}/${target.service}/aws4_request`;

  const headers: Record<string, string> = {};
  let givenHash: string | undefined;
  for (const name in request.headers) {
    const lower = name.toLowerCase();
    if (GENERATED.has(lower)) continue;
    headers[name] = request.headers[name] as string;
    if (lower === 'x-amz-content-sha256') givenHash ??= headers[name];
  }
  headers.host = target_.host;
  headers['x-amz-date'] = longDate;
  if (identity.sessionToken) headers['x-amz-security-token'] = identity.sessionToken;
  const payloadHash = givenHash ?? sha256Hex(request.body);
  if (givenHash === undefined) headers['x-amz-content-sha256'] = payloadHash;

  const layout = layoutOf(headers);
  let canonicalHeaders = '';
  for (let i = 0; i < layout.lower.length; i++) canonicalHeaders += `${layout.lower[i]}:${layout.canonicalValue(i, headers[layout.source[i] as string] as string)}\n`;
  const { signedHeaders } = layout;
  const canonicalRequest = `${request.method}\n${target_.path}\n${target_.query}\n${canonicalHeaders}\n${signedHeaders}\n${payloadHash}`;
  const stringToSign = `AWS4-HMAC-SHA256\n${longDate}\n${scope}\n${sha256Hex(canonicalRequest)}`;
  const signature = createHmac('sha256', signingKey(identity.secretAccessKey, shortDate, target)).update(stringToSign).digest('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${identity.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
}

/** `20261126T190000Z`: the ISO time without separators and milliseconds. */
function amzDate(now: Date): string {
  const iso = now.toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
}

/** Whitespace runs folded to one space, line breaks made spaces, the ends trimmed of spaces (a value that needs none is left as is). */
function canonicalValue(value: string): string {
  return NEEDS_FOLDING.test(value) ? value.replace(/[\r\n]/g, ' ').replace(/[ \t]+/g, ' ').replace(/^ | $/g, '') : value;
}
const NEEDS_FOLDING = /[\r\n\t]|  |^ | $/;

/**
 * Which headers a set of names signs, in canonical order: each signed header's lower-cased name,
 * the name it has in the headers (when two differ only in case, the last in sorted order wins,
 * as a Map keyed by the lower-cased name would have it) and `SignedHeaders`. The same few sets are
 * signed over and over (an operation's headers, the date, the hash, the session token), so each
 * layout is worked out once (a bounded cache). It also keeps each header's last value and its
 * canonical form: the session token (a kilobyte on Lambda) is scanned once, not per signature.
 */
interface Layout {
  lower: string[];
  source: string[];
  signedHeaders: string;
  canonicalValue(index: number, value: string): string;
}

const layouts = new Map<string, Layout>();

function layoutOf(headers: Record<string, string>): Layout {
  let id = '';
  for (const name in headers) id += `${name.length}:${name}`;
  let layout = layouts.get(id);
  if (layout === undefined) {
    const byLower = new Map<string, string>();
    for (const name of Object.keys(headers).sort()) {
      const lower = name.toLowerCase();
      if (UNSIGNABLE.has(lower) || lower.startsWith('proxy-') || lower.startsWith('sec-')) continue;
      byLower.set(lower, name);
    }
    const lower = [...byLower.keys()].sort();
    const raw: (string | undefined)[] = [];
    const canonical: string[] = [];
    layout = {
      lower,
      source: lower.map((name) => byLower.get(name) as string),
      signedHeaders: lower.join(';'),
      canonicalValue(index, value) {
        if (raw[index] !== value) {
          raw[index] = value;
          canonical[index] = canonicalValue(value);
        }
        return canonical[index] as string;
      },
    };
    if (layouts.size >= 50) layouts.clear();
    layouts.set(id, layout);
  }
  return layout;
}

/**
 * Host, canonical path and query of a URL: the same few endpoints are signed over and over (the
 * key and usage tables, the secret), so each is worked out once (a bounded cache).
 */
const targets = new Map<string, { host: string; path: string; query: string }>();

function requestTarget(address: string): { host: string; path: string; query: string } {
  let found = targets.get(address);
  if (found === undefined) {
    const url = new URL(address);
    found = { host: url.host, path: canonicalPath(url.pathname), query: canonicalQuery(url.searchParams) };
    if (targets.size >= 50) targets.clear();
    targets.set(address, found);
  }
  return found;
}

/** One-shot hashing (Node 21.7+): about half the cost of a createHash object for a short text. */
function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/**
 * Derived keys per secret, date, region and service (the SDK keeps such a cache too): one
 * derivation a day. Kept as KeyObjects: `createHmac` with a Buffer key checks whether it is a
 * KeyObject the slow way, about 9 us of the 11 an HMAC then costs (2 with a KeyObject), and every
 * AWS call (two per metered request on Lambda) signs with one.
 */
const keys = new Map<string, KeyObject>();

function signingKey(secret: string, shortDate: string, target: AwsSigning): KeyObject {
  const id = `${shortDate}\n${target.region}\n${target.service}\n${secret}`;
  let key = keys.get(id);
  if (key === undefined) {
    const hmac = (with_: Buffer | string, data: string) => createHmac('sha256', with_).update(data).digest();
    key = createSecretKey(hmac(hmac(hmac(hmac(`AWS4${secret}`, shortDate), target.region), target.service), 'aws4_request'));
    if (keys.size >= 50) keys.clear();
    keys.set(id, key);
  }
  return key;
}

/** RFC 3986 encoding, as the SDK's escapeUri: encodeURIComponent plus `!'()*`. */
function escapeUri(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function canonicalPath(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const normalized = `${path.startsWith('/') ? '/' : ''}${segments.join('/')}${segments.length > 0 && path.endsWith('/') ? '/' : ''}`;
  return escapeUri(normalized).replace(/%2F/g, '/');
}

/** The query sorted by encoded name (repeated names by encoded pair), as the SDK builds it from `Object.fromEntries`. */
function canonicalQuery(params: URLSearchParams): string {
  const byName = new Map<string, string>();
  // The SDK signs what `Object.fromEntries(url.searchParams)` gave it: the last value of a repeated name.
  for (const [name, value] of params) if (name.toLowerCase() !== 'x-amz-signature') byName.set(escapeUri(name), `${escapeUri(name)}=${escapeUri(value)}`);
  return [...byName.keys()].sort().map((name) => byName.get(name)).join('&');
}
