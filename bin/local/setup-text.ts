/**
 * Ready-to-paste client setup for a key, as text and as data. The data form is what the
 * client conformance suite uses, so the onboarding text is exercised, not just printed.
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

/**
 * The setup as shell commands, flush left so that the here-document's closing EOF works when
 * pasted. The settings file holds the key, so it is written readable by its owner only; its one
 * line of JSON is printed as a printf argument, since npm start's output lines that start with
 * `{` are its JSON log lines.
 */
export function setupText(baseUrl: string, key: string): string {
  const setup = clientSetup(baseUrl, key);
  const exports = (env: Record<string, string>) => Object.entries(env).map(([name, value]) => `export ${name}=${value}`);
  const dir = (path: string) => path.slice(0, path.lastIndexOf('/'));
  return [
    '# Claude Code, in this shell:',
    ...exports(setup.claudeCode.env),
    'claude',
    `# ... or for good, in a settings file of its own (your ~/.claude/settings.json is left alone):`,
    `(umask 077 && mkdir -p ${dir(setup.claudeCode.settingsPath)} && printf '%s\\n' '${setup.claudeCode.settingsJson.trimEnd()}' > ${setup.claudeCode.settingsPath})`,
    `claude --settings ${setup.claudeCode.settingsPath}`,
    '',
    `# Codex CLI, with a profile file of its own (your ~/.codex/config.toml is left alone):`,
    `mkdir -p ${dir(setup.codex.profilePath)} && cat > ${setup.codex.profilePath} <<'EOF'`,
    setup.codex.profileToml.trimEnd(),
    'EOF',
    ...exports(setup.codex.env),
    `codex --profile ${setup.codex.profile}`,
    '',
    '# SDKs:',
    `# ${setup.anthropicSdk}`,
    `# ${setup.openaiSdk}`,
  ].join('\n');
}
