import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/**
 * A full-screen CLI (Claude Code's TUI) in a tmux pane of its own tmux server: the test types,
 * presses keys and reads the screen as a person sees it (tmux renders the terminal; the raw
 * stream of a redrawing TUI is not readable text). The pane stays after the program exits, so
 * its last screen can still be read.
 *
 * `managedSettings` puts a managed-settings.json at /etc/claude-code/ for this program only: it
 * runs in a private mount namespace where /etc is an overlay whose upper layer (on a tmpfs) holds
 * the file. The machine's own /etc is never written, and nothing else sees the file (util-linux
 * unshare makes the new namespace's mounts private, so the overlay does not propagate back).
 * Claude Code 2.1.332 reads the gateway sign-in keys only from there: given through
 * CLAUDE_CODE_MANAGED_SETTINGS_PATH or --managed-settings, its /login ignored them.
 */
export interface TuiOptions {
  binary: string;
  args: string[];
  /** The program's whole environment (nothing inherited). */
  env: Record<string, string>;
  cwd: string;
  /** A scratch folder for the tmux socket and the launch script. */
  dir: string;
  managedSettings?: Record<string, unknown>;
  cols?: number;
  rows?: number;
}

export interface Tui {
  /** The pane's text: scrollback and screen, wrapped lines joined. */
  capture(): Promise<string>;
  /** Waits until the text matches (`count` times, for a message that comes again); returns the text. */
  waitFor(pattern: RegExp, options?: { timeoutMs?: number; count?: number }): Promise<string>;
  /** Types text as keystrokes (no Enter). */
  type(text: string): Promise<void>;
  /** tmux key names: Enter, Up, Down, Escape, C-c. */
  press(...keys: string[]): Promise<void>;
  /** Types a line and presses Enter. */
  submit(line: string): Promise<void>;
  /** Whether the program has exited. */
  exited(): Promise<boolean>;
  close(): Promise<void>;
}

const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

export async function startTui(options: TuiOptions): Promise<Tui> {
  mkdirSync(options.dir, { recursive: true });
  const socket = join(options.dir, 'tmux.sock');
  const conf = join(options.dir, 'tmux.conf');
  writeFileSync(conf, 'set -g remain-on-exit on\nset -g history-limit 20000\nset -g status off\n');
  const program = ['env', '-i', ...Object.entries(options.env).map(([name, value]) => `${name}=${value}`), options.binary, ...options.args];
  let launch = `cd ${quote(options.cwd)} && exec ${program.map(quote).join(' ')}`;
  if (options.managedSettings) {
    const settings = join(options.dir, 'managed-settings.json');
    const mountPoint = join(options.dir, 'etc-overlay');
    mkdirSync(mountPoint, { recursive: true });
    writeFileSync(settings, JSON.stringify(options.managedSettings));
    const inner = [
      'set -e',
      'mount -t tmpfs -o mode=0755 tmpfs "$1"',
      'mkdir -p "$1/upper/claude-code" "$1/work"',
      'cp "$2" "$1/upper/claude-code/managed-settings.json"',
      'mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1/upper,workdir=$1/work" /etc',
      'shift 2',
      'exec "$@"',
    ].join('; ');
    launch = `cd ${quote(options.cwd)} && exec unshare -m -- /bin/sh -c ${quote(inner)} sh ${quote(mountPoint)} ${quote(settings)} ${program.map(quote).join(' ')}`;
  }
  const script = join(options.dir, 'launch.sh');
  writeFileSync(script, `#!/bin/sh\n${launch}\n`);
  const tmux = (...args: string[]) => exec('tmux', ['-S', socket, '-f', conf, ...args], { env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: options.dir, TERM: 'xterm-256color' } });
  await tmux('new-session', '-d', '-s', 'main', '-x', String(options.cols ?? 120), '-y', String(options.rows ?? 40), `/bin/sh ${quote(script)}`);

  const capture = async () => (await tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'main')).stdout;
  const tui: Tui = {
    capture,
    async waitFor(pattern, { timeoutMs = 30_000, count = 1 } = {}) {
      const global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
      let text = '';
      for (const until = Date.now() + timeoutMs; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 200))) {
        text = await capture();
        if ((text.match(global)?.length ?? 0) >= count) return text;
      }
      throw new Error(`the screen did not show ${pattern} (${count}x) within ${timeoutMs} ms; it shows:\n${text.split('\n').filter((line) => line.trim()).slice(-40).join('\n')}`);
    },
    async type(text) {
      await tmux('send-keys', '-t', 'main', '-l', text);
    },
    async press(...keys) {
      for (const key of keys) {
        await tmux('send-keys', '-t', 'main', key);
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
    },
    async submit(line) {
      await tui.type(line);
      // A TUI reads a burst of keys as a paste; Enter comes as a key of its own.
      await new Promise((resolve) => setTimeout(resolve, 500));
      await tui.press('Enter');
    },
    async exited() {
      return (await tmux('display-message', '-p', '-t', 'main', '#{pane_dead}')).stdout.trim() === '1';
    },
    async close() {
      await tmux('kill-server').catch(() => undefined);
    },
  };
  return tui;
}
