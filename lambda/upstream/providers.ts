import type { Upstream, UpstreamType } from '../config/routing.ts';
import type { Family } from '../routes.ts';

/** What each upstream type speaks, where to send it, and how it authenticates. */
export type Operation = 'create' | 'count_tokens';

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
      return `${upstream.baseUrl}/responses`;
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
