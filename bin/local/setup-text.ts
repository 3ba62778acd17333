import { clientSetup } from '../../lambda/auth/client-setup.ts';

export { clientSetup, CODEX_KEY_VARIABLE, type ClientSetup } from '../../lambda/auth/client-setup.ts';

/** The client setup of a key as the key CLI and npm start print it. */
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
