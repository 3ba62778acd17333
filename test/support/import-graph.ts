import { buildSync, type Metafile } from 'esbuild';

const ROOT = new URL('../../', import.meta.url).pathname;

/**
 * The modules `entries` load at run time, as esbuild resolves them with the project's tsconfig:
 * `import { type X } from 'pkg'` stays a load of `pkg` (as under Node's type stripping), `import
 * type` goes. Packages are left external: they appear as imports, not as inputs.
 */
export function importGraph(entries: string[]): Metafile {
  const result = buildSync({ absWorkingDir: ROOT, entryPoints: entries, bundle: true, platform: 'node', format: 'esm', packages: 'external', metafile: true, write: false, outdir: 'unused', logLevel: 'silent' });
  return result.metafile;
}

/** `npm start` and `npm run keys`. */
export const RUNTIME_ENTRIES = ['bin/dev-server.ts', 'bin/keys.ts'];
