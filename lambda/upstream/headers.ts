import type { UpstreamType } from '../config/routing.ts';
import { SIMULATOR_GAP_HEADER } from './simulator/simulator.ts';

/**
 * Header hygiene in both directions.
 *
 * Upstream-bound: client headers are forwarded (Claude Code's `anthropic-beta` list, Codex's
 * session headers) except hop-by-hop headers (RFC 9110 §7.6.1), the client's credentials, and
 * what the Lambda front end or CloudFront added. Client-bound: only an allowlist of upstream
 * headers, so provider account details never leak.
 */
const DROP_TO_UPSTREAM = new Set([
  'authorization',
  'x-api-key',
  'cookie',
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'accept-encoding',
  // The body goes upstream decoded (parse-body undoes any Content-Encoding).
  'content-encoding',
  'x-origin-verify',
  'forwarded',
  'via',
  'provider-version',
]);

const DROP_PREFIXES = ['x-forwarded-', 'x-amzn-', 'x-amz-', 'cloudfront-'];

export function upstreamRequestHeaders(client: Record<string, string | undefined>, upstreamType: UpstreamType): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(client)) {
    if (value === undefined || DROP_TO_UPSTREAM.has(name)) continue;
    if (DROP_PREFIXES.some((prefix) => name.startsWith(prefix))) continue;
    // Anthropic's protocol headers (version, betas) mean nothing to another provider.
    if (upstreamType !== 'anthropic' && name.startsWith('anthropic-')) continue;
    headers[name] = value;
  }
  return headers;
}

// The last one is the built-in simulator's own: its event pace.
const PASS_TO_CLIENT = new Set(['content-type', 'retry-after', 'retry-after-ms', 'x-should-retry', 'openai-processing-ms', 'openai-version', SIMULATOR_GAP_HEADER]);
const PASS_PREFIXES = ['anthropic-ratelimit-', 'x-ratelimit-'];

export function clientResponseHeaders(upstream: Headers): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of upstream) {
    if (PASS_TO_CLIENT.has(name) || PASS_PREFIXES.some((prefix) => name.startsWith(prefix))) headers[name] = value;
  }
  const upstreamId = upstream.get('request-id') ?? upstream.get('x-request-id');
  if (upstreamId) headers['x-upstream-request-id'] = upstreamId;
  return headers;
}
