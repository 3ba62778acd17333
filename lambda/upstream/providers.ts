import type { Upstream, UpstreamType } from '../config/routing.ts';
import type { Family } from '../routes.ts';
import { adaptBedrockResponse, bedrockRequest, countsTokens } from './bedrock/bedrock.ts';
import { signAwsRequest } from '../aws/signer.ts';
import { upstreamRequestHeaders } from './headers.ts';
import { withoutRequestTags } from '../formats/messages/request-tags.ts';

/**
 * What each upstream type speaks, where to send it, and how it authenticates: the one place a
 * provider's particulars live (a new provider is one more entry here and, when it needs more, a
 * module of its own next to this one, as `bedrock/` is).
 * Operations: `create` (a model turn), `count_tokens` (Anthropic), `input_tokens` and `compact`
 * (OpenAI's `/responses/input_tokens` and `/responses/compact`).
 */
export type Operation = 'create' | 'count_tokens' | 'input_tokens' | 'compact';

const FORMAT: Record<UpstreamType, Family | 'chat' | 'both'> = {
  anthropic: 'messages',
  // Bedrock's InvokeModel takes and returns Anthropic Messages (adapted in bedrock/).
  bedrock: 'messages',
  openai: 'responses',
  'openai-chat': 'chat',
  simulator: 'both',
};

/** Upstream types that serve an operation other than `create` themselves. */
const SERVES: Record<Exclude<Operation, 'create'>, readonly UpstreamType[]> = {
  count_tokens: ['anthropic', 'bedrock'],
  input_tokens: ['openai'],
  compact: ['openai'],
};

/** Whether the upstream serves `operation` for this model itself (else the gateway answers locally). */
export function servesOperation(type: UpstreamType, operation: Operation, upstreamModel: string): boolean {
  if (operation === 'create') return true;
  // Bedrock counts tokens for bare foundation-model ids only.
  if (type === 'bedrock' && operation === 'count_tokens') return countsTokens(upstreamModel);
  return SERVES[operation].includes(type);
}

/** True when the upstream speaks the client's format, so the request can pass through as is. */
export function speaksFamily(upstream: Pick<Upstream, 'type' | 'speaks'>, family: Family): boolean {
  const format = upstream.speaks ?? FORMAT[upstream.type];
  return format === 'both' || format === family;
}

/** The wire format an upstream that does not speak the client's is translated to (a simulator told to speak one, or a provider's). */
export function upstreamFormat(upstream: Pick<Upstream, 'type' | 'speaks'>): 'messages' | 'responses' | 'chat' {
  const format = upstream.speaks ?? FORMAT[upstream.type];
  if (format === 'both') throw new Error('The simulator speaks every client format unless told one.');
  return format;
}

export function upstreamUrl(upstream: Upstream, operation: Operation): string {
  switch (upstream.type) {
    case 'anthropic':
      return `${upstream.baseUrl}/v1/messages${operation === 'count_tokens' ? '/count_tokens' : ''}`;
    case 'openai':
      return `${upstream.baseUrl}/responses${operation === 'input_tokens' ? '/input_tokens' : operation === 'compact' ? '/compact' : ''}`;
    case 'openai-chat':
      return `${upstream.baseUrl}/chat/completions`;
    case 'bedrock':
    case 'simulator':
      return upstream.baseUrl;
  }
}

/** Provider auth and protocol headers, added after the client's credentials were removed. */
export function providerHeaders(upstream: Upstream, credential: string | undefined, clientHeaders: Record<string, string | undefined>): Record<string, string> {
  if (upstream.type === 'anthropic') {
    const headers: Record<string, string> = {
      // `provider-version` is our documented alias of `anthropic-version`.
      'anthropic-version': clientHeaders['anthropic-version'] ?? clientHeaders['provider-version'] ?? '2023-06-01',
    };
    if (credential !== undefined) headers['x-api-key'] = credential;
    return headers;
  }
  return credential === undefined ? {} : { authorization: `Bearer ${credential}` };
}

/**
 * A body in the upstream's format: the bytes to send, and the body as the gateway parsed it, for
 * a provider that rewrites members (Bedrock) to read them without parsing megabytes again. The
 * gateway's own edits (the model name, removed reasoning) may be missing from `parsed`; every
 * other member is the same.
 */
export interface OutgoingBody {
  text: string;
  parsed: Record<string, unknown>;
}

/** One request to an upstream, ready to send. */
export interface ProviderRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** What the provider could not take and the gateway removed (reported in `x-gateway-dropped`). */
  dropped: string[];
}

/**
 * The request an upstream gets for a body already in its format: URL, forwarded client headers,
 * the provider's own headers and credential (an API key, or an AWS SigV4 signature made last, over
 * the final bytes).
 */
export async function providerRequest(
  upstream: Upstream,
  operation: Operation,
  upstreamModel: string,
  outgoing: OutgoingBody,
  streaming: boolean,
  clientHeaders: Record<string, string | undefined>,
  credential: string | undefined,
): Promise<ProviderRequest> {
  if (upstream.type === 'bedrock') return bedrockRequest(upstream, operation, upstreamModel, outgoing, streaming, clientHeaders, credential);
  let body = outgoing.text;
  const url = upstreamUrl(upstream, operation);
  const headers: Record<string, string> = { ...upstreamRequestHeaders(clientHeaders, upstream.type), ...providerHeaders(upstream, credential, clientHeaders), 'content-type': 'application/json' };
  const dropped: string[] = [];
  // Anthropic's Messages API on Bedrock (Mantle, signed for AWS) refuses request tags: left out.
  if (upstream.type === 'anthropic' && upstream.aws !== undefined) {
    const cleaned = withoutRequestTags(body, headers['anthropic-beta']);
    body = cleaned.body;
    if (cleaned.betaHeader === undefined) delete headers['anthropic-beta'];
    else headers['anthropic-beta'] = cleaned.betaHeader;
    dropped.push(...cleaned.dropped);
  }
  // An `aws` upstream (e.g. Bedrock's OpenAI-compatible endpoint) is signed instead of keyed.
  if (upstream.aws !== undefined && credential === undefined) Object.assign(headers, await signAwsRequest(upstream.aws, { method: 'POST', url, headers, body }));
  return { url, headers, body, dropped };
}

/** The upstream's answer in the format the gateway expects of its type (as is, but for Bedrock's). */
export async function adaptResponse(upstream: Upstream, operation: Operation, response: Response): Promise<Response> {
  return upstream.type === 'bedrock' ? adaptBedrockResponse(response, operation) : response;
}
