import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { besideBundleCommands } from '../lib/bundle-files.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../', import.meta.url));

/**
 * The production build of the handler, made the way the stack deploys it (HANDLER_BUNDLING in
 * lib/constructs/gateway-function.ts, which NodejsFunction turns into these esbuild options).
 * Repeated here rather than imported because importing that module loads aws-cdk-lib (seconds).
 */
export const BUNDLE_OPTIONS = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  minify: true,
  sourcemap: true,
  sourcesContent: false,
  mainFields: ['module', 'main'],
  // bundleAwsSDK: nothing is external, the SDK is inside the bundle.
  external: [],
  banner: { js: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);" },
} as const satisfies esbuild.BuildOptions;

export interface BuiltBundle {
  dir: string;
  path: string;
  mapPath: string;
  bytes: number;
  gzipBytes: number;
}

/** Bundles lambda/handler.ts into a fresh temp dir (never into the repository). */
export async function buildBundle(): Promise<BuiltBundle> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-bench-'));
  const path = join(dir, 'index.mjs');
  await esbuild.build({ ...BUNDLE_OPTIONS, mainFields: [...BUNDLE_OPTIONS.mainFields], external: [], entryPoints: [join(ROOT, 'lambda/handler.ts')], absWorkingDir: ROOT, outfile: path, logLevel: 'warning' });
  // The rest of the function's asset, by the bundling hook's own commands (the runtime's exec wrapper among it).
  for (const command of besideBundleCommands(ROOT.replace(/\/$/, ''), dir, BUNDLE_OPTIONS.target)) await run('/bin/sh', ['-c', command]);
  const code = readFileSync(path);
  return { dir, path, mapPath: `${path}.map`, bytes: code.length, gzipBytes: gzipSync(code).length };
}

export function removeBundle(bundle: BuiltBundle): void {
  rmSync(bundle.dir, { recursive: true, force: true });
}

/** Just enough environment for the handler module to evaluate (it reads config at import). */
const IMPORT_ENV = {
  GATEWAY_CONFIG_JSON: JSON.stringify({ upstreams: { s: { type: 'simulator' } }, routes: [{ model: '*', upstream: 's' }] }),
  GATEWAY_KEYS_TABLE: 'bench-keys',
  GATEWAY_LOG: 'off',
  AWS_REGION: 'us-east-1',
  AWS_EC2_METADATA_DISABLED: 'true',
};

// The Lambda runtime defines `awslambda` before loading the handler; middy calls it at import.
const IMPORT_SCRIPT = (url: string) =>
  `globalThis.awslambda={streamifyResponse:(h)=>h,HttpResponseStream:{from:(s)=>s}};` +
  `const t=performance.now();await import(${JSON.stringify(url)});` +
  `process.stdout.write(String(performance.now()-t));`;

export interface ColdImport {
  /** Time of `await import(bundle)` inside each fresh process, ms. */
  importMs: number[];
  /** Spawn to exit of the same processes, ms (includes Node's own start-up). */
  processMs: number[];
  /** Spawn to exit of `node -e ""`, ms: Node's start-up alone, for comparison. */
  bareNodeMs: number[];
}

export type Launch = (command: string, args: string[]) => { command: string; args: string[] };

/**
 * Imports the bundle in `count` fresh processes, one at a time, plus as many bare Node runs;
 * `launch` may wrap both commands (a CPU quota, bench/lambda/cpu-quota.ts).
 */
export async function measureColdImport(bundlePath: string, count: number, launch?: Launch): Promise<ColdImport> {
  const result: ColdImport = { importMs: [], processMs: [], bareNodeMs: [] };
  const env = { ...process.env, ...IMPORT_ENV };
  const script = IMPORT_SCRIPT(new URL(`file://${bundlePath}`).href);
  const node = (args: string[]) => launch?.(process.execPath, args) ?? { command: process.execPath, args };
  for (let i = 0; i < count; i++) {
    let started = performance.now();
    const importing = node(['--input-type=module', '-e', script]);
    const { stdout } = await run(importing.command, importing.args, { env, timeout: 60_000 });
    result.processMs.push(performance.now() - started);
    const importMs = Number(stdout);
    if (!Number.isFinite(importMs)) throw new Error(`cold import printed "${stdout}"`);
    result.importMs.push(importMs);
    started = performance.now();
    const bare = node(['-e', '']);
    await run(bare.command, bare.args, { timeout: 60_000 });
    result.bareNodeMs.push(performance.now() - started);
  }
  return result;
}
