import type { UpstreamType } from '../config/routing.ts';
import { SIMULATOR_GAP_HEADER } from './simulator/simulator.ts';

/**
 * Header hygiene in both directions.
 *
 * Upstream-bound: an allowlist per provider type. A client header reaches the upstream next to
 * the operator's credential, so a header the provider reads to choose an account, organization,
 * project or workspace (`openai-organization`, `openai-project`, `chatgpt-account-id`,
 * `anthropic-workspace-id`...) would let any key holder choose the operator's; so would a
 * header that changes what the provider bills. Forwarded are only the provider's documented
 * protocol headers and the session headers its official clients send, and never one that the
 * client's `Connection` header names (hop-by-hop, RFC 9110 §7.6.1). Credentials, proxy headers
 * (`x-forwarded-*`, `x-real-ip`, `true-client-ip`, `forwarded`, `via`) and what the Function URL
 * or CloudFront add are not on any list. Client-bound: only an allowlist of upstream headers,
 * so provider account details never leak.
 */
interface Allowed {
  names: ReadonlySet<string>;
  prefixes: readonly string[];
}

/** What every HTTP client and the official SDKs send (`x-stainless-*`: the SDKs' own retry count, timeout and platform). */
const COMMON = ['accept', 'user-agent', 'x-client-request-id'];
const SDK_PREFIXES = ['x-stainless-'];

const ALLOWED: Record<UpstreamType, Allowed> = {
  // https://platform.claude.com/docs/en/api/versioning and /api/beta-headers; Claude Code's
  // session and subagent headers (its LLM gateway protocol). `anthropic-version` is set by
  // providerHeaders from the client's (or `provider-version`).
  anthropic: {
    names: new Set([...COMMON, 'anthropic-beta', 'x-app', 'x-claude-code-session-id', 'x-claude-code-agent-id', 'x-claude-code-parent-agent-id']),
    prefixes: SDK_PREFIXES,
  },
  // https://platform.openai.com/docs/api-reference (`OpenAI-Beta`); Codex's session headers
  // (`originator`, `session_id`/`session-id`, `thread-id`, `x-codex-*`, its subagent and
  // Responses Lite markers), as the installed Codex sends them.
  openai: {
    names: new Set([...COMMON, 'openai-beta', 'originator', 'session_id', 'session-id', 'thread-id', 'x-openai-subagent', 'x-openai-memgen-request', 'x-openai-internal-codex-responses-lite']),
    prefixes: [...SDK_PREFIXES, 'x-codex-'],
  },
  // Self-hosted Chat Completions servers: nothing beyond the common headers.
  'openai-chat': { names: new Set(COMMON), prefixes: SDK_PREFIXES },
  // Bedrock requests are built and signed from scratch (bedrock/bedrock.ts); the simulator calls nothing.
  bedrock: { names: new Set(), prefixes: [] },
  simulator: { names: new Set(), prefixes: [] },
};

export function upstreamRequestHeaders(client: Record<string, string | undefined>, upstreamType: UpstreamType): Record<string, string> {
  const allowed = ALLOWED[upstreamType];
  // Headers the client marks as hop-by-hop are for the gateway's connection only, allowed or not.
  const hopByHop = new Set((client.connection ?? '').split(',').map((name) => name.trim().toLowerCase()));
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(client)) {
    if (value === undefined || hopByHop.has(name)) continue;
    if (allowed.names.has(name) || allowed.prefixes.some((prefix) => name.startsWith(prefix))) headers[name] = value;
  }
  return headers;
}

// The last one is the built-in simulator's own: its event pace.
const PASS_TO_CLIENT = new Set(['content-type', 'retry-after', 'retry-after-ms', 'x-should-retry', 'openai-processing-ms', 'openai-version', SIMULATOR_GAP_HEADER]);
// Not `anthropic-ratelimit-*`: those describe the operator's organization at the provider, and
// Claude Code reads that family (`-unified-*`) as the user's own standing; the gateway sends its
// own for the caller's limits (usage/budget-headers.ts), as Claude Code's gateway protocol asks.
const PASS_PREFIXES = ['x-ratelimit-'];

export function clientResponseHeaders(upstream: Headers): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of upstream) {
    if (PASS_TO_CLIENT.has(name) || PASS_PREFIXES.some((prefix) => name.startsWith(prefix))) headers[name] = value;
  }
  const upstreamId = upstream.get('request-id') ?? upstream.get('x-request-id');
  if (upstreamId) headers['x-upstream-request-id'] = upstreamId;
  return headers;
}
