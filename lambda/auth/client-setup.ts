/**
 * Ready-to-paste client setup for a key, as data: what the key CLI prints (bin/local/setup-text.ts
 * renders it as text) and what the console shows next to a new key. The client conformance suite
 * uses it, so the onboarding is exercised, not just printed.
 */
export interface ClientSetup {
  claudeCode: { env: Record<string, string> };
  codex: { configToml: string; env: Record<string, string> };
  anthropicSdk: string;
  openaiSdk: string;
}

export const CODEX_KEY_VARIABLE = 'GATEWAY_API_KEY';

export function clientSetup(baseUrl: string, key: string): ClientSetup {
  const base = baseUrl.replace(/\/+$/, '');
  return {
    claudeCode: { env: { ANTHROPIC_BASE_URL: `${base}/first`, ANTHROPIC_AUTH_TOKEN: key } },
    codex: {
      configToml: [
        'model_provider = "gateway"',
        '',
        '[model_providers.gateway]',
        'name = "Agent gateway"',
        `base_url = "${base}/second/v1"`,
        'wire_api = "responses"',
        `env_key = "${CODEX_KEY_VARIABLE}"`,
        'supports_websockets = false',
        '',
      ].join('\n'),
      env: { [CODEX_KEY_VARIABLE]: key },
    },
    anthropicSdk: `new Anthropic({ baseURL: '${base}/first', apiKey: '${key}' })`,
    openaiSdk: `new OpenAI({ baseURL: '${base}/second/v1', apiKey: '${key}' })`,
  };
}
