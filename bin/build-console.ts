import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';

/**
 * `npm run build:console`: the console page (lambda/admin/ui/src: Preact, htm, uPlot) built by
 * esbuild into minified files with hashed names, in lambda/admin/ui/dist. The result is committed
 * (npm start runs from source and `npm ci --omit=dev` has no esbuild); a test rebuilds it and
 * fails when it differs from the sources, and another holds it to its size budget
 * (docs/console.md, "Size").
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const UI_DIR = `${ROOT}lambda/admin/ui/`;
export const DIST_DIR = `${UI_DIR}dist/`;

/** Browsers the page is built for: what supports <dialog>, ES2022 and CSS clip-path without prefixes. */
const TARGETS = ['chrome111', 'edge111', 'firefox111', 'safari16.4'];

/** The built files, by their path under dist/. */
export async function buildConsole(): Promise<Map<string, Buffer>> {
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [
      { in: 'lambda/admin/ui/src/main.ts', out: 'app' },
      { in: 'lambda/admin/ui/src/style.css', out: 'app' },
    ],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: TARGETS,
    minify: true,
    sourcemap: false,
    write: false,
    outdir: 'out',
    entryNames: '[name]-[hash]',
    charset: 'utf8',
    // The file hash covers the inputs' paths: a worktree whose node_modules is a symlink would
    // otherwise name the page differently from a clean checkout building the same bytes.
    preserveSymlinks: true,
    logLevel: 'silent',
  });
  const files = new Map<string, Buffer>();
  let js = '';
  let css = '';
  for (const output of result.outputFiles) {
    const name = output.path.slice(output.path.lastIndexOf('/') + 1);
    if (name.endsWith('.js')) js = name;
    else if (name.endsWith('.css')) css = name;
    else throw new Error(`unexpected build output ${name}`);
    files.set(`assets/${name}`, Buffer.from(output.contents));
  }
  const page = readFileSync(`${UI_DIR}index.html`, 'utf8').replace('{{js}}', js).replace('{{css}}', css);
  files.set('index.html', Buffer.from(page));
  files.set('manifest.json', Buffer.from(`${JSON.stringify({ js, css }, null, 2)}\n`));
  return files;
}

/** Bytes and gzip -9 bytes of each file a browser loads for the first view. */
export function sizes(files: Map<string, Buffer>): { file: string; bytes: number; gzip: number }[] {
  return [...files].filter(([name]) => name !== 'manifest.json').map(([file, bytes]) => ({ file, bytes: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length }));
}

async function main(): Promise<void> {
  const files = await buildConsole();
  rmSync(`${DIST_DIR}assets`, { recursive: true, force: true });
  mkdirSync(`${DIST_DIR}assets`, { recursive: true });
  for (const [name, bytes] of files) writeFileSync(`${DIST_DIR}${name}`, bytes);
  const table = sizes(files);
  for (const { file, bytes, gzip } of table) console.log(`${file.padEnd(28)} ${String(bytes).padStart(8)} B  ${String(gzip).padStart(7)} B gzip`);
  console.log(`${'total'.padEnd(28)} ${String(table.reduce((sum, entry) => sum + entry.bytes, 0)).padStart(8)} B  ${String(table.reduce((sum, entry) => sum + entry.gzip, 0)).padStart(7)} B gzip`);
  console.log(`Wrote ${readdirSync(`${DIST_DIR}assets`).length + 2} files to ${DIST_DIR}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
