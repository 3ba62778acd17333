import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from '../support/processes.ts';
import { claudeEnv, CODEX_OFFLINE_TABLES, runProcess } from './clis.ts';
import { assertIsolated } from './isolation.ts';

/**
 * The README's quick start, run as written, so that it cannot rot (issue 20): the fenced `sh`
 * blocks of its first sections, in order. The first block starts the gateway (`npm start`, on a
 * fresh data folder and a free port); the others run in one shell as a newcomer would paste them,
 * with a fresh HOME, the printed address and key in place of the README's `127.0.0.1:8787` and
 * `gwk_...`, and `claude` and `codex` resolving to the CLIs this project pins (`npx claude`, `npx
 * codex`). A command followed by `# → text` must print that text. Not run: `npm ci` (the checkout
 * under test is installed). Added for the sandbox, as a user's own settings: the CLIs'
 * phone-home switches (Claude Code's variables; a `~/.codex/config.toml` of its own, ending in a
 * table), so the run stays inside the suite's loopback-only namespace.
 */
const ROOT = new URL('../../', import.meta.url).pathname;
const SECTIONS = ['Quick start', 'Connect Claude Code', 'Connect Codex', 'Try translation and tools with the simulator'];
const README_ADDRESS = 'http://127.0.0.1:8787';
const README_KEY = 'gwk_...';

/** The fenced `sh` blocks of a `## ` section, in order. */
export function shellBlocks(markdown: string, section: string): string[] {
  const start = markdown.indexOf(`\n## ${section}\n`);
  if (start < 0) throw new Error(`README has no "## ${section}" section`);
  const end = markdown.indexOf('\n## ', start + 1);
  const body = markdown.slice(start, end < 0 ? undefined : end);
  return [...body.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => (match[1] as string).trimEnd());
}

/**
 * A block as a script that checks what it must: every `command   # → text` line (outside
 * here-documents) runs the command, shows its output and fails unless the text is in it.
 */
export function checkedScript(block: string): string {
  const out: string[] = [];
  let heredoc: string | undefined;
  for (const line of block.split('\n')) {
    if (heredoc !== undefined) {
      out.push(line);
      if (line === heredoc) heredoc = undefined;
      continue;
    }
    heredoc = /<<'?(\w+)'?/.exec(line)?.[1];
    const check = /^(.*\S)\s+# → (.+)$/.exec(line);
    if (!check) {
      out.push(line);
      continue;
    }
    const [, command, expected] = check as unknown as [string, string, string];
    const quoted = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
    out.push(
      `echo "\\$ "${quoted(command)}`,
      `__out=$(${command} 2>&1) || { printf '%s\\n' "$__out"; echo "README command failed: "${quoted(command)}; exit 1; }`,
      `printf '%s\\n' "$__out"`,
      `case "$__out" in *${quoted(expected)}*) ;; *) echo "README check failed: "${quoted(command)}" did not print "${quoted(expected)}; exit 1 ;; esac`,
    );
  }
  return out.join('\n');
}

test('the README quick start works as written: both CLIs answer, with tool calls and translated turns', async () => {
  assertIsolated();
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const [first, ...rest] = SECTIONS.flatMap((section) => shellBlocks(readme, section));
  expect(first).toBe('npm ci\nnpm start');
  expect(rest.length).toBeGreaterThanOrEqual(3);

  const root = tempDir('gateway-readme-');
  const dataDir = join(root, 'data');
  // `npm start`, as the first block says, with the npm on PATH (on a free port: the README's 8787 may be taken here).
  const gateway = spawn('npm', ['start'], { cwd: ROOT, env: { ...process.env, PORT: '0', GATEWAY_DATA_DIR: dataDir, ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', GATEWAY_CONFIG: '' }, detached: true });
  let output = '';
  gateway.stdout.on('data', (chunk) => (output += chunk));
  gateway.stderr.on('data', (chunk) => (output += chunk));
  try {
    const address = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start did not start:\n${output}`)), 30_000);
      gateway.stdout.on('data', () => {
        const url = /listening on (http:\/\/[^\s/]+)/i.exec(output)?.[1];
        if (url && /\nReady/.test(output)) {
          clearTimeout(timer);
          resolve(url);
        }
      });
      gateway.once('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${output}`)));
    });
    // The first key: printed on a terminal, else written to the data folder (never to a log).
    const firstKeyFile = join(dataDir, 'first-key.txt');
    const key = /\b(gwk_[A-Za-z0-9_.-]+)/.exec(output)?.[1] ?? /\b(gwk_[A-Za-z0-9_.-]+)/.exec(existsSync(firstKeyFile) ? readFileSync(firstKeyFile, 'utf8') : '')?.[1];
    expect(key).toBeDefined();

    const home = join(root, 'home');
    mkdirSync(join(home, '.codex'), { recursive: true });
    writeFileSync(join(home, '.codex', 'config.toml'), ['check_for_update_on_startup = false', '', ...CODEX_OFFLINE_TABLES, ''].join('\n'));
    const work = join(root, 'work');
    mkdirSync(work);
    const script = ['set -e', ...rest.map(checkedScript)].join('\n').replaceAll(README_ADDRESS, address).replaceAll(README_KEY, key as string);
    const run = await runProcess('bash', ['-c', script], {
      cwd: work,
      timeoutMs: 240_000,
      // Claude Code's phone-home switches as in every other cell; `claude` and `codex` are the pinned ones.
      env: claudeEnv({}, home, { PATH: `${join(ROOT, 'node_modules', '.bin')}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin` }),
    });
    if (run.code !== 0) throw new Error(`the README's commands failed (exit ${run.code ?? run.signal}${run.timedOut ? ', timed out' : ''}):\n${run.stdout.slice(-4000)}\n${run.stderr.slice(-2000)}`);

    // What the gateway saw: both formats, a tool round trip, and a translated turn each way.
    const lines = output.split('\n').filter((line) => line.startsWith('{') && line.includes('"msg":"request"')).map((line) => JSON.parse(line) as Record<string, unknown>);
    const served = (route: string, model: string, upstream: string) => lines.some((line) => line.route === route && line.model === model && line.upstream === upstream && line.status === 200);
    expect(served('messages', 'gpt-5.5', 'simulator-openai')).toBe(true);
    expect(served('responses', 'claude-sonnet-5', 'simulator-anthropic')).toBe(true);
    expect(served('responses', 'gpt-6.2-sol', 'simulator-openai')).toBe(true);
    expect(lines.filter((line) => line.status !== 200)).toEqual([]);
  } finally {
    try {
      if (gateway.pid !== undefined && gateway.exitCode === null) process.kill(-gateway.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    await new Promise((resolve) => (gateway.exitCode !== null ? resolve(undefined) : gateway.once('exit', resolve)));
  }
}, 300_000);

test('a "# → text" line fails unless the command prints the text; here-documents are left as written', async () => {
  const run = (block: string) => runProcess('bash', ['-c', `set -e\n${checkedScript(block)}`], { cwd: tempDir('gateway-readme-check-'), env: { PATH: '/usr/bin:/bin' }, timeoutMs: 10_000 });
  const heredoc = "cat > out.txt <<'EOF'\nnot a check   # → never printed\nEOF\ncat out.txt   # → not a check";
  expect((await run(`echo 'hello there'   # → hello\n${heredoc}`)).code).toBe(0);
  const failed = await run("echo 'hello there'   # → goodbye\necho after");
  expect(failed.code).not.toBe(0);
  expect(failed.stdout).toContain("README check failed: echo 'hello there' did not print goodbye");
  expect(failed.stdout).not.toContain('after');
  expect((await run('false   # → anything')).stdout).toContain('README command failed: false');
});
