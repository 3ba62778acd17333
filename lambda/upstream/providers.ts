import type { Upstream, UpstreamType } from '../config/routing.ts';
import type { Family } from '../routes.ts';

/**
 * What each upstream type speaks, where to send it, and how it authenticates.
 * Operations: `create` (a model turn), `count_tokens` (Anthropic), `input_tokens` and `compact`
 * (OpenAI's `/responses/input_tokens` and `/responses/compact`).
 */
export type Operation = 'create' | 'count_tokens' | 'input_tokens' | 'compact';

/** Upstream types that serve an operation other than `create` themselves. */
const SERVES: Record<Exclude<Operation, 'create'>, UpstreamType> = {
  count_tokens: 'anthropic',
  input_tokens: 'openai',
  compact: 'openai',
};

export function servesOperation(type: UpstreamType, operation: Operation): boolean {
  return operation === 'create' || SERVES[operation] === type;
}

const FORMAT: Record<UpstreamType, Family | 'chat' | 'both'> = {
  anthropic: 'messages',
  openai: 'responses',
  'openai-chat': 'chat',
  simulator: 'both',
};

/** True when the upstream speaks the client's format, so the request can pass through as is. */
export function speaksFamily(type: UpstreamType, family: Family): boolean {
  const format = FORMAT[type];
  return format === 'both' || format === family;
}

/** The wire format of a (non-simulator) upstream, as the translator names it. */
export function upstreamFormat(type: Exclude<UpstreamType, 'simulator'>): 'messages' | 'responses' | 'chat' {
  return FORMAT[type] === 'chat' ? 'chat' : (FORMAT[type] as 'messages' | 'responses');
}

export function upstreamUrl(upstream: Upstream, operation: Operation): string {
  switch (upstream.type) {
    case 'anthropic':
      return `${upstream.baseUrl}/v1/messages${operation === 'count_tokens' ? '/count_tokens' : ''}`;
    case 'openai':
      return `${upstream.baseUrl}/responses${operation === 'input_tokens' ? '/input_tokens' : operation === 'compact' ? '/compact' : ''}`;
    case 'openai-chat':
      return `${upstream.baseUrl}/chat/completions`;
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
