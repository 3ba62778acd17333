import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { importGraph, RUNTIME_ENTRIES } from '../support/import-graph.ts';

/**
 * `npm ci --omit=dev` (what a server install does) must leave `npm start` and `npm run keys`
 * working: every package their code loads at run time is a `dependency`, and the lockfile installs
 * it and everything it needs without the dev tree.
 */
const ROOT = new URL('../../', import.meta.url).pathname;

interface LockEntry {
  dev?: boolean;
  optional?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const manifest = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { dependencies: Record<string, string> };
const lock = JSON.parse(readFileSync(`${ROOT}package-lock.json`, 'utf8')) as { packages: Record<string, LockEntry> };
const builtins = new Set(builtinModules);

/** `@scope/name/sub` -> `@scope/name`; `name/sub` -> `name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

/** Which packages each entry's code loads at run time, with the files that load them. */
function runtimePackages(): Map<string, string[]> {
  const packages = new Map<string, string[]>();
  for (const [file, input] of Object.entries(importGraph(RUNTIME_ENTRIES).inputs)) {
    for (const imported of input.imports) {
      if (!imported.external || imported.path.startsWith('node:') || builtins.has(imported.path)) continue;
      const name = packageOf(imported.path);
      packages.set(name, [...(packages.get(name) ?? []), file]);
    }
  }
  return packages;
}

/** The lockfile path npm installs `name` at for the package at `from` (Node's lookup: nearest node_modules up). */
function resolveInLock(name: string, from: string): string | undefined {
  for (let base = from; ; ) {
    const candidate = `${base === '' ? '' : `${base}/`}node_modules/${name}`;
    if (lock.packages[candidate] !== undefined) return candidate;
    if (base === '') return undefined;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut === -1 ? '' : base.slice(0, cut);
  }
}

/** Lockfile entries of `name` and everything it needs that npm would leave out with --omit=dev. */
function devOnlyClosure(name: string): string[] {
  const devOnly: string[] = [];
  const seen = new Set<string>();
  const visit = (path: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    const entry = lock.packages[path] as LockEntry;
    if (entry.dev) devOnly.push(path);
    for (const dependency of Object.keys({ ...entry.dependencies, ...entry.peerDependencies })) {
      const found = resolveInLock(dependency, path);
      if (found !== undefined) visit(found);
    }
  };
  const top = resolveInLock(name, '');
  if (top === undefined) return [`node_modules/${name} (not in package-lock.json)`];
  visit(top);
  return devOnly;
}

test('npm start and npm run keys load at run time only packages listed in dependencies', () => {
  const packages = runtimePackages();
  expect(packages.size).toBeGreaterThan(0);
  const missing = [...packages].filter(([name]) => manifest.dependencies[name] === undefined).map(([name, files]) => `${name} (imported by ${[...new Set(files)].join(', ')})`);
  expect(missing).toEqual([]);
});

test('the lockfile installs those packages and what they need without the dev tree (npm ci --omit=dev)', () => {
  const devOnly = [...runtimePackages().keys()].flatMap(devOnlyClosure);
  expect(devOnly).toEqual([]);
});
