import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { ClientSetup } from '../../bin/local/setup-text.ts';

/**
 * The real CLIs, run as native binaries straight from their platform packages (so it does not
 * matter whether npm ran @anthropic-ai/claude-code's postinstall, which only copies that binary
 * over a stub), each with a fresh HOME, a minimal environment and a hard timeout.
 */
const require = createRequire(import.meta.url);

function isMusl(): boolean {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return report?.header?.glibcVersionRuntime === undefined;
}

function platformPackage(prefix: string): string {
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  return `${prefix}-${process.platform}-${arch}`;
}

function packageVersion(name: string): string {
  return (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version;
}

function claudeBinary(): string {
  const names = isMusl() ? [`${platformPackage('@anthropic-ai/claude-code')}-musl`, platformPackage('@anthropic-ai/claude-code')] : [platformPackage('@anthropic-ai/claude-code')];
  for (const name of names) {
    try {
      const binary = join(dirname(require.resolve(`${name}/package.json`)), 'claude');
      if (existsSync(binary)) return binary;
    } catch {
      // try the next one
    }
  }
  throw new Error(`no Claude Code native binary installed (${names.join(', ')}); run npm ci`);
}

function codexVendorDir(): string {
  const triple = { x64: 'x86_64-unknown-linux-musl', arm64: 'aarch64-unknown-linux-musl' }[process.arch as 'x64' | 'arm64'];
  const name = platformPackage('@openai/codex');
  const dir = join(dirname(require.resolve(`${name}/package.json`)), 'vendor', triple);
  if (!existsSync(join(dir, 'bin', 'codex'))) throw new Error(`no Codex native binary in ${dir}; run npm ci`);
  return dir;
}

export const CLAUDE = { name: 'Claude Code', version: packageVersion('@anthropic-ai/claude-code'), binary: claudeBinary() };
const CODEX_VENDOR = codexVendorDir();
export const CODEX = { name: 'Codex CLI', version: packageVersion('@openai/codex'), binary: join(CODEX_VENDOR, 'bin', 'codex'), pathDir: join(CODEX_VENDOR, 'codex-path') };

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  timedOut: boolean;
}

export interface RunOptions {
  env: Record<string, string>;
  cwd: string;
  timeoutMs: number;
}

/**
 * Runs a command in its own process group with exactly `env` (nothing inherited) and stdin
 * closed. At the timeout the group is killed, so a hang fails the scenario instead of the suite.
 */
export function runProcess(command: string, args: string[], options: RunOptions): Promise<CliRun> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      killGroup(); // anything the CLI left running in its group (tool shells)
      resolve({ code, signal, stdout, stderr, durationMs: Date.now() - started, timedOut });
    });
  });
}

// ------------------------------------------------------------------------------ Claude Code

/** Claude Code's environment for the suite: offline, no telemetry, no update checks, fresh HOME (docs/testing.md, the real clients). */
export function claudeEnv(setupEnv: Record<string, string>, home: string, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    TERM: 'dumb',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL: '1',
    ...setupEnv,
    ...extra,
  };
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/**
 * Writes the printed settings file (`setup.claudeCode`) verbatim into HOME and returns the
 * arguments that use it, as the printed setup says: `claude --settings <file>`.
 */
export function claudeSettings(home: string, setup: ClientSetup['claudeCode']): string[] {
  const path = join(home, setup.settingsPath.replace(/^~\//, ''));
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, setup.settingsJson, { mode: 0o600 });
  return ['--settings', path];
}

export interface ClaudeResult extends CliRun {
  /** The `--output-format json` result object, when one was printed. */
  result: { type: string; subtype?: string; is_error?: boolean; result?: string; session_id?: string; num_turns?: number; usage?: Record<string, unknown> } | undefined;
}

export async function runClaude(args: string[], options: RunOptions): Promise<ClaudeResult> {
  const run = await runProcess(CLAUDE.binary, args, options);
  // The last JSON line whose type is "result" (its key order changed across versions).
  const result = run.stdout
    .split('\n')
    .reverse()
    .filter((candidate) => candidate.startsWith('{'))
    .map((candidate) => {
      try {
        return JSON.parse(candidate) as ClaudeResult['result'];
      } catch {
        return undefined;
      }
    })
    .find((parsed) => parsed?.type === 'result');
  return { ...run, result };
}

// ------------------------------------------------------------------------------ Codex

/**
 * The config.toml tables that switch off Codex's every phone-home (plugins, the daemon, analytics,
 * feedback, OpenTelemetry: https://github.com/openai/codex/blob/main/docs/config.md). Tables, so
 * they go after every top-level key of the file.
 */
export const CODEX_OFFLINE_TABLES = ['[features]', 'plugins = false', 'daemon_auto_start = false', '', '[analytics]', 'enabled = false', '', '[feedback]', 'enabled = false', '', '[otel]', 'exporter = "none"'];

export interface CodexHomeOptions {
  /** The `setup.codex` the key CLI printed: its profile file is written verbatim. */
  setup: ClientSetup['codex'];
  catalogPath: string;
  compactTokenLimit?: number;
  /** Trusted project directory (the TUI asks otherwise). */
  trustedDir?: string;
}

/**
 * Writes CODEX_HOME: a config.toml of test-only settings that ends in a table, as a user's often
 * does (the model catalog, and every phone-home switched off: https://github.com/openai/codex/blob/main/docs/config.md),
 * and beside it the printed profile file, verbatim, which `--profile <name>` layers over it.
 */
export function writeCodexHome(home: string, options: CodexHomeOptions): string {
  mkdirSync(home, { recursive: true });
  const config = [
    '# test-only settings added by the client conformance suite',
    'check_for_update_on_startup = false',
    `model_catalog_json = ${JSON.stringify(options.catalogPath)}`,
    ...(options.compactTokenLimit === undefined ? [] : [`model_auto_compact_token_limit = ${options.compactTokenLimit}`]),
    '',
    ...CODEX_OFFLINE_TABLES,
    ...(options.trustedDir === undefined ? [] : ['', `[projects.${JSON.stringify(options.trustedDir)}]`, 'trust_level = "trusted"']),
    '',
  ].join('\n');
  writeFileSync(join(home, 'config.toml'), config);
  const profileFile = options.setup.profilePath.replace(/^~\/\.codex\//, '');
  writeFileSync(join(home, profileFile), options.setup.profileToml);
  return config;
}

/** `codex <args>` with the printed profile selected, as the printed setup says to run it. */
export function withProfile(setup: ClientSetup['codex'], args: string[]): string[] {
  return args[0] === 'exec' ? ['exec', '--profile', setup.profile, ...args.slice(1)] : ['--profile', setup.profile, ...args];
}

export function codexEnv(setupEnv: Record<string, string>, home: string, term = 'dumb'): Record<string, string> {
  return { PATH: `${CODEX.pathDir}:/usr/local/bin:/usr/bin:/bin`, HOME: home, CODEX_HOME: home, TERM: term, ...setupEnv };
}

export interface CodexEvent {
  type: string;
  item?: { id?: string; type?: string; text?: string; command?: string; aggregated_output?: string; exit_code?: number | null; status?: string; changes?: { path: string; kind: string }[] };
  usage?: Record<string, number>;
  message?: string;
  error?: { message?: string };
  thread_id?: string;
}

export interface CodexResult extends CliRun {
  events: CodexEvent[];
  /** The agent_message texts, in order. */
  messages: string[];
}

export async function runCodex(args: string[], options: RunOptions): Promise<CodexResult> {
  const run = await runProcess(CODEX.binary, args, options);
  const events: CodexEvent[] = [];
  for (const line of run.stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      events.push(JSON.parse(line) as CodexEvent);
    } catch {
      // not an event line
    }
  }
  const messages = events.filter((event) => event.type === 'item.completed' && event.item?.type === 'agent_message').map((event) => event.item?.text ?? '');
  return { ...run, events, messages };
}

export interface TuiOptions extends RunOptions {
  args: string[];
  prompt: string;
  /** Polled after the prompt was sent; the TUI is closed (Ctrl+C twice) once it returns true. */
  done: () => boolean;
}

/**
 * Drives the Codex TUI through a pseudo-terminal made by util-linux `script` (no native Node
 * module needed): waits for the composer, types the prompt, presses Enter, waits for `done`,
 * then quits with Ctrl+C twice. It answers the terminal's cursor-position queries.
 */
export function runCodexTui(options: TuiOptions): Promise<CliRun & { transcript: string }> {
  const started = Date.now();
  const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
  const command = `stty cols 120 rows 40; exec ${[CODEX.binary, ...options.args].map(quote).join(' ')}`;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let transcript = '';
    let stderr = '';
    let stage: 'starting' | 'typing' | 'waiting' | 'quitting' = 'starting';
    let timedOut = false;
    const timers: NodeJS.Timeout[] = [];
    const later = (ms: number, action: () => void) => timers.push(setTimeout(action, ms));
    const write = (text: string) => {
      if (!child.stdin.destroyed) child.stdin.write(text);
    };
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const poll = setInterval(() => {
      if (stage === 'waiting' && options.done()) {
        stage = 'quitting';
        later(500, () => write('\x03'));
        later(900, () => write('\x03'));
        later(5_000, killGroup);
      }
    }, 100);
    child.stdout.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      transcript += text;
      if (text.includes('\x1b[6n')) write('\x1b[1;1R');
      if (stage === 'starting' && transcript.includes('Ask Codex to do anything')) {
        stage = 'typing';
        later(300, () => write(options.prompt));
        later(800, () => {
          write('\r');
          stage = 'waiting';
        });
        // The TUI sometimes drops that Enter while it is still busy starting up: the prompt then
        // stays in the composer and no turn starts (seen in full CI runs). Enter again a few times;
        // on an empty composer, once the turn has started, Enter submits nothing.
        for (const at of [4_800, 8_800, 12_800]) later(at, () => stage === 'waiting' && !options.done() && write('\r'));
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    later(options.timeoutMs, () => {
      timedOut = true;
      killGroup();
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearInterval(poll);
      for (const timer of timers) clearTimeout(timer);
      killGroup();
      resolve({ code, signal, stdout: transcript, stderr, durationMs: Date.now() - started, timedOut, transcript });
    });
  });
}
