import { clientSetup } from '../../lambda/auth/client-setup.ts';

export { clientSetup, CODEX_KEY_VARIABLE, CODEX_PROFILE, type ClientSetup } from '../../lambda/auth/client-setup.ts';

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
