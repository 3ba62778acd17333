import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The login helper (lambda/identity/gateway-login.mjs) as a developer has it: downloaded from the
 * gateway into a bin folder as `gateway-login`, made executable, run by `#!/usr/bin/env node`
 * with the oldest Node on this machine (the helper promises Node 18 and later; CI machines ship
 * Node 20) and a browser that is a script writing down the links it is asked to open.
 */
export interface HelperHome {
  /** Where `gateway-login` is (first on PATH). */
  bin: string;
  /** PATH for the helper's runs: the bin folder, then the Node it runs with. */
  path: string;
  /** $XDG_CONFIG_HOME of the runs: the sign-ins are in `<configHome>/agent-gateway/`. */
  configHome: string;
  /** The `BROWSER` command: it appends each link to `opened`. */
  browser: string;
  opened: string;
  /** The environment of a run (nothing inherited). */
  env: Record<string, string>;
  /** The file a sign-in to `origin` is kept in. */
  stateFile(origin: string): string;
}

/** The directory of the oldest Node 18+ here (/usr/bin/node when it is older than this process's), for PATH. */
export function oldestNodeDir(): string {
  const system = '/usr/bin/node';
  if (existsSync(system)) {
    const version = spawnSync(system, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
    const major = Number(version.split('.')[0]);
    if (major >= 18 && major < Number(process.versions.node.split('.')[0])) return dirname(system);
  }
  return dirname(process.execPath);
}

/** `curl -fsSo <bin>/gateway-login <host>/login/helper.mjs && chmod +x <bin>/gateway-login`, in a fresh folder. */
export async function installHelper(gateway: string, root: string, nodeDir = oldestNodeDir()): Promise<HelperHome> {
  const bin = join(root, 'bin');
  const configHome = join(root, 'config');
  mkdirSync(bin, { recursive: true });
  const response = await fetch(`${gateway}/login/helper.mjs`);
  if (response.status !== 200) throw new Error(`GET /login/helper.mjs answered ${response.status}`);
  writeFileSync(join(bin, 'gateway-login'), await response.text());
  chmodSync(join(bin, 'gateway-login'), 0o755);
  const opened = join(root, 'opened.txt');
  const browser = join(root, 'browser.sh');
  writeFileSync(browser, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`);
  chmodSync(browser, 0o755);
  const path = `${bin}:${nodeDir}:/usr/bin:/bin`;
  return {
    bin,
    path,
    configHome,
    browser,
    opened,
    env: { PATH: path, HOME: root, XDG_CONFIG_HOME: configHome, BROWSER: browser },
    stateFile: (origin) => join(configHome, 'agent-gateway', `${new URL(origin).host.replace(/[^A-Za-z0-9.-]/g, '_')}.json`),
  };
}

export interface HelperRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `gateway-login <args>` with the home's environment (plus `extra`); resolves when it exits. */
export function runHelper(home: HelperHome, args: string[], extra: Record<string, string> = {}, timeoutMs = 60_000): Promise<HelperRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(home.bin, 'gateway-login'), args, { env: { ...home.env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The links the browser was asked to open so far. */
export function openedLinks(home: HelperHome): string[] {
  return existsSync(home.opened) ? readFileSync(home.opened, 'utf8').split('\n').filter(Boolean) : [];
}

/** Waits for the `n`th link the browser is asked to open (1-based). */
export async function nthOpenedLink(home: HelperHome, n: number, timeoutMs = 15_000): Promise<string> {
  for (const until = Date.now() + timeoutMs; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 50))) {
    const link = openedLinks(home)[n - 1];
    if (link) return link;
  }
  throw new Error(`the browser was not asked to open a link (#${n}) within ${timeoutMs} ms`);
}
