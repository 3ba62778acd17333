import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clientSetup, setupText } from '../../../bin/local/setup-text.ts';
import { tempDir } from '../../support/processes.ts';

/**
 * The printed setup, pasted into a shell as it is printed: it writes each CLI's file of its own
 * and leaves the user's own config alone (issue 20: an appended Codex snippet ended up inside the
 * config's last table). The real CLIs reading these files is the client suite's part
 * (test/clients/, every cell runs with them).
 */
const KEY = 'gwk_example.eyJhdWQiOiJjbGF1ZGUtZ2F0ZXdheSJ9.abcdefgh';
const URL = 'http://127.0.0.1:9999';

test('pasted into sh, the setup writes the settings and profile files and runs each CLI with the one flag that uses them', () => {
  const home = tempDir('gateway-setup-home-');
  try {
    // A user's own config.toml that ends inside a table, and Claude Code settings of their own.
    mkdirSync(join(home, '.codex'));
    const userConfig = 'model = "gpt-6.2-sol"\n\n[projects."/work"]\ntrust_level = "trusted"\n';
    writeFileSync(join(home, '.codex', 'config.toml'), userConfig);
    mkdirSync(join(home, '.claude'));
    writeFileSync(join(home, '.claude', 'settings.json'), '{"theme":"dark"}\n');
    // The CLIs themselves are stand-ins that note how they were called.
    const standIns = 'claude() { echo "claude $*" >> "$HOME/calls"; }\ncodex() { echo "codex $* key=$GATEWAY_API_KEY" >> "$HOME/calls"; }\n';
    execFileSync('sh', ['-c', `${standIns}${setupText(URL, KEY)}`], { env: { PATH: '/usr/bin:/bin', HOME: home } });

    const setup = clientSetup(URL, KEY);
    const settings = join(home, '.claude', 'gateway.json');
    expect(readFileSync(settings, 'utf8')).toBe(setup.claudeCode.settingsJson);
    expect(JSON.parse(setup.claudeCode.settingsJson)).toEqual({ env: { ANTHROPIC_BASE_URL: `${URL}/first`, ANTHROPIC_AUTH_TOKEN: KEY } });
    // It holds the key: readable by its owner only.
    expect(statSync(settings).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(home, '.codex', 'gateway.config.toml'), 'utf8')).toBe(setup.codex.profileToml);
    expect(setup.codex.profileToml).toMatch(/^model_provider = "gateway"\n\n\[model_providers\.gateway\]\n[^[]*base_url = "http:\/\/127\.0\.0\.1:9999\/second\/v1"\n[^[]*env_key = "GATEWAY_API_KEY"\n/);
    expect(setup.codex.profileToml).not.toContain(KEY);
    expect(readFileSync(join(home, '.codex', 'config.toml'), 'utf8')).toBe(userConfig);
    expect(readFileSync(join(home, '.claude', 'settings.json'), 'utf8')).toBe('{"theme":"dark"}\n');
    expect(readFileSync(join(home, 'calls'), 'utf8')).toBe(`claude \nclaude --settings ${settings}\ncodex --profile gateway key=${KEY}\n`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
