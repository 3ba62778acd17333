import { readFileSync } from 'node:fs';
import * as esbuild from 'esbuild';
import { HANDLER_BUNDLING, HANDLER_ENTRY, PROJECT_ROOT } from '../../lib/constructs/gateway-function.ts';
import { AGGREGATOR_ENTRY } from '../../lib/constructs/usage-aggregator.ts';

/** Minified bundle budget: every byte is parsed on each cold start. */
const BUDGET_BYTES = 500_000;

const devDependencies = Object.keys(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).devDependencies);

/** Inputs that must never reach the Lambda bundle, with the reason shown when one does. */
const FORBIDDEN: { pattern: RegExp; reason: string }[] = [
  { pattern: /^node_modules\/zod\/v4\/classic\//, reason: "the full zod namespace (lambda code imports 'zod/mini')" },
  { pattern: /^node_modules\/@aws-sdk\//, reason: 'the AWS SDK (the Lambda signs its few AWS calls itself, lambda/aws/: an SDK client costs ~300 kB and a slow first call)' },
  { pattern: /^node_modules\/undici\//, reason: 'undici (Node has fetch built in)' },
  { pattern: /^node_modules\/@smithy\/(signature-v4|core)\//, reason: "the AWS SDK's signer (lambda/aws/signer.ts signs on node:crypto: the SDK's costs 18 kB and ~3 ms of every cold start)" },
  { pattern: /^node_modules\/(level|classic-level|memory-level|abstract-level)\//, reason: "the local store's LevelDB modules" },
  { pattern: /^(bin|lib|test)\//, reason: 'local, CDK or test code' },
  { pattern: /^lambda\/admin\/ui\//, reason: 'the console page (served as files beside the bundle, never imported)' },
  ...devDependencies.map((name) => ({ pattern: new RegExp(`^node_modules/${name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/`), reason: `the dev dependency ${name}` })),
];

/**
 * esbuild options equivalent to what NodejsFunction runs for HANDLER_BUNDLING (aws-lambda-nodejs
 * bundling.js: `esbuild --bundle <entry> --platform=node ...`).
 */
function asEsbuildOptions(bundling: typeof HANDLER_BUNDLING, entry: Pick<esbuild.BuildOptions, 'entryPoints' | 'stdin'>): esbuild.BuildOptions {
  return {
    ...entry,
    absWorkingDir: PROJECT_ROOT,
    bundle: true,
    platform: 'node',
    write: false,
    metafile: true,
    outfile: 'index.mjs',
    format: bundling.format,
    target: bundling.target,
    minify: bundling.minify,
    sourcemap: bundling.sourceMap,
    sourcesContent: bundling.sourcesContent,
    mainFields: [...bundling.mainFields],
    banner: { js: bundling.banner },
    // bundleAwsSDK: true makes NodejsFunction mark nothing external.
    external: bundling.bundleAwsSDK ? [] : ['@aws-sdk/*'],
    logLevel: 'silent',
  };
}

/**
 * The modules whose code is in the bundle. Not `metafile.inputs`: esbuild parses every module
 * an index re-exports (each SDK client's index re-exports its aggregated class) and tree-shaking
 * then drops the unused ones; what costs cold-start time is what the output contains.
 */
function bundledModules(result: esbuild.BuildResult): { modules: string[]; bytes: number } {
  const output = Object.entries(result.metafile?.outputs ?? {}).find(([path]) => path.endsWith('.mjs'))?.[1];
  if (output === undefined) throw new Error('esbuild produced no .mjs output');
  // A worktree whose node_modules is a symlink gets its packages under their real path (`../../elsewhere/node_modules/...`).
  const modules = Object.entries(output.inputs).filter(([, input]) => input.bytesInOutput > 0).map(([path]) => path.replace(/^(\.\.\/)+(.*?\/)?(?=node_modules\/)/, ''));
  return { modules, bytes: output.bytes };
}

function forbidden(modules: string[]): string[] {
  return modules.flatMap((module) => FORBIDDEN.filter(({ pattern }) => pattern.test(module)).map(({ reason }) => `${module}: ${reason}`));
}

describe('handler bundle budget', () => {
  test('the test translates every bundling option the stack sets', () => {
    // A new option in HANDLER_BUNDLING must be mirrored in asEsbuildOptions, or the budget measures another bundle.
    // (commandHooks only copies files beside the bundle: it does not change the bundle.)
    expect(Object.keys(HANDLER_BUNDLING).sort()).toEqual(['banner', 'bundleAwsSDK', 'commandHooks', 'format', 'mainFields', 'minify', 'sourceMap', 'sourcesContent', 'target']);
  });

  test(`lambda/handler.ts bundles, minified, under ${BUDGET_BYTES} bytes and without forbidden modules`, async () => {
    const { modules, bytes } = bundledModules(await esbuild.build(asEsbuildOptions(HANDLER_BUNDLING, { entryPoints: [HANDLER_ENTRY] })));
    expect(modules).toContain('lambda/handler.ts');
    // AWS calls are signed in the bundle, not by a client the runtime might provide.
    expect(modules).toContain('lambda/aws/signer.ts');
    expect(forbidden(modules)).toEqual([]);
    expect(bytes).toBeLessThan(BUDGET_BYTES);
  });

  test('lambda/aggregate.ts, the usage aggregator, bundles on its own: a DynamoDB client and the fold, under 40 kB', async () => {
    const { modules, bytes } = bundledModules(await esbuild.build(asEsbuildOptions(HANDLER_BUNDLING, { entryPoints: [AGGREGATOR_ENTRY] })));
    expect(modules).toEqual(expect.arrayContaining(['lambda/aggregate.ts', 'lambda/usage/rollup-fold.ts', 'lambda/aws/signer.ts']));
    expect(modules).not.toContain('lambda/gateway.ts');
    expect(forbidden(modules)).toEqual([]);
    expect(bytes).toBeLessThan(40_000);
  });

  test('the forbidden-module check catches the imports it exists to stop', async () => {
    const careless = "import * as z from 'zod'; import { DynamoDBClient } from '@aws-sdk/client-dynamodb'; export const used = [z.string(), DynamoDBClient];";
    const { modules } = bundledModules(await esbuild.build(asEsbuildOptions(HANDLER_BUNDLING, { stdin: { contents: careless, resolveDir: PROJECT_ROOT, loader: 'ts' } })));
    const found = forbidden(modules).join('\n');
    expect(found).toContain('the full zod namespace');
    expect(found).toContain('the AWS SDK');
  });
});
