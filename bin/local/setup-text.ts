/**
 * Ready-to-paste client setup for a key, as text and as data. The data form is what the
 * client conformance suite uses, so the onboarding text is exercised, not just printed.
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

export function setupText(baseUrl: string, key: string): string {
  const setup = clientSetup(baseUrl, key);
  const exports = (env: Record<string, string>) => Object.entries(env).map(([name, value]) => `  export ${name}=${value}`).join('\n');
  return [
    'Claude Code:',
    exports(setup.claudeCode.env),
    '',
    'Codex CLI (~/.codex/config.toml):',
    setup.codex.configToml.replace(/^(?=.)/gm, '  '),
    exports(setup.codex.env),
    '',
    'Anthropic SDK:',
    `  ${setup.anthropicSdk}`,
    'OpenAI SDK:',
    `  ${setup.openaiSdk}`,
  ].join('\n');
}
