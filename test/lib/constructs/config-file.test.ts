import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFIG_FILE_NAME, configFileCommands } from '../../../lib/constructs/config-file.ts';

/** Runs the commands the way NodejsFunction runs hook commands on Linux and macOS: each in `bash -c`. */
function run(commands: string[]): void {
  for (const command of commands) execFileSync('bash', ['-c', command], { stdio: ['ignore', 'ignore', 'inherit'] });
}

describe('configFileCommands', () => {
  const dirs: string[] = [];
  const scratch = (name: string) => {
    const dir = join(mkdtempSync(join(tmpdir(), 'config-file-')), name);
    dirs.push(dir);
    execFileSync('mkdir', ['-p', dir]);
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('write the config byte for byte, whatever characters it holds, into a directory whose name a shell would expand', () => {
    const dir = scratch('out $HOME `id` "q" \'s\' !x');
    const config = { loginNotice: 'Use $HOME and `id`; "quotes" \'too\' \\ back! \n newline, ünïcödé, 🙂', routes: [{ model: 'claude-*', upstream: 'a' }] };
    run(configFileCommands(config, dir));
    expect(readFileSync(join(dir, CONFIG_FILE_NAME), 'utf8')).toBe(JSON.stringify(config));
  });

  test('a large config goes in pieces, each command short enough for any shell NodejsFunction uses', () => {
    const dir = scratch('large');
    const config = { routes: Array.from({ length: 900 }, (_, i) => ({ model: `model-${i}-${'x'.repeat(40)}`, upstream: 'a' })) };
    const commands = configFileCommands(config, dir);
    expect(commands.length).toBeGreaterThan(5);
    // cmd.exe takes 8,191 characters a line.
    for (const command of commands) expect(command.length).toBeLessThan(8_191);
    run(commands);
    expect(JSON.parse(readFileSync(join(dir, CONFIG_FILE_NAME), 'utf8'))).toEqual(config);
  });

  test('a rerun replaces the file instead of appending to it', () => {
    const dir = scratch('rerun');
    run(configFileCommands({ a: 'x'.repeat(10_000) }, dir));
    run(configFileCommands({ b: 1 }, dir));
    expect(readFileSync(join(dir, CONFIG_FILE_NAME), 'utf8')).toBe('{"b":1}');
  });

  test('hand no shell anything but base64 and a fixed script', () => {
    const [command] = configFileCommands({ a: '$(rm -rf /)' }, '/tmp/$(x)');
    expect(command).toMatch(/^node -e "[^"$`]+" [A-Za-z0-9+/=]+ [A-Za-z0-9+/=]+$/);
  });
});
