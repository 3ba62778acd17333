/**
 * Ready-to-paste client setup for a key, as data: what the key CLI prints (bin/local/setup-text.ts
 * renders it as text) and what the console shows next to a new key. The client conformance suite
 * uses it, so the onboarding is exercised, not just printed.
 *
 * Each CLI's durable setup is a file of its own, never an edit of the user's config: TOML puts a
 * top-level key appended after a `[table]` into that table (an appended `model_provider` line
 * silently did nothing for a config.toml ending in a table), and JSON cannot be appended to at
 * all. Codex 0.134+ layers `~/.codex/<name>.config.toml` over config.toml with `--profile <name>`
 * (https://developers.openai.com/codex/config-advanced#profiles); Claude Code reads the `env` of a
 * settings file given with `--settings <file>` (both checked with the real CLIs).
 */
export interface ClientSetup {
  claudeCode: {
    /** For one shell: `export NAME=value`. */
    env: Record<string, string>;
    /** For good: a settings file of its own, used with `claude --settings <settingsPath>`. */
    settingsPath: string;
    settingsJson: string;
  };
  codex: {
    /** `codex --profile <profile>` reads `~/.codex/<profile>.config.toml` over config.toml. */
    profile: string;
    profilePath: string;
    profileToml: string;
    /** The key, in the variable the profile names (never in the file). */
    env: Record<string, string>;
  };
  anthropicSdk: string;
  openaiSdk: string;
}

export const CODEX_KEY_VARIABLE = 'GATEWAY_API_KEY';
export const CODEX_PROFILE = 'gateway';

export function clientSetup(baseUrl: string, key: string): ClientSetup {
  const base = baseUrl.replace(/\/+$/, '');
  const claudeEnv = { ANTHROPIC_BASE_URL: `${base}/first`, ANTHROPIC_AUTH_TOKEN: key };
  return {
    claudeCode: { env: claudeEnv, settingsPath: '~/.claude/gateway.json', settingsJson: `${JSON.stringify({ env: claudeEnv })}\n` },
    codex: {
      profile: CODEX_PROFILE,
      profilePath: `~/.codex/${CODEX_PROFILE}.config.toml`,
      profileToml: [
        `model_provider = "${CODEX_PROFILE}"`,
        '',
        `[model_providers.${CODEX_PROFILE}]`,
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
