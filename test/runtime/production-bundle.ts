import { execSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import { HANDLER_BUNDLING, HANDLER_ENTRY, PROJECT_ROOT } from '../../lib/constructs/gateway-function.ts';

/** The options this file translates; a new one in HANDLER_BUNDLING must be added here too. */
export const TRANSLATED_OPTIONS = ['banner', 'bundleAwsSDK', 'commandHooks', 'format', 'mainFields', 'minify', 'sourceMap', 'sourcesContent', 'target'];

/**
 * Builds lambda/handler.ts the way the stack deploys it (HANDLER_BUNDLING, translated to the
 * esbuild call NodejsFunction makes, as test/lib/bundle-budget.test.ts does) into a fresh
 * directory, as `index.mjs` next to its source map and the files it reads: the task root of a
 * `index.handler` function.
 */
export async function buildProductionBundle(): Promise<string> {
  const unknown = Object.keys(HANDLER_BUNDLING).filter((option) => !TRANSLATED_OPTIONS.includes(option));
  if (unknown.length > 0) throw new Error(`HANDLER_BUNDLING has options this build does not translate: ${unknown.join(', ')}`);
  const taskRoot = mkdtempSync(join(tmpdir(), 'gateway-task-root-'));
  await esbuild.build({
    entryPoints: [HANDLER_ENTRY],
    absWorkingDir: PROJECT_ROOT,
    bundle: true,
    platform: 'node',
    outfile: join(taskRoot, 'index.mjs'),
    format: HANDLER_BUNDLING.format,
    target: HANDLER_BUNDLING.target,
    minify: HANDLER_BUNDLING.minify,
    sourcemap: HANDLER_BUNDLING.sourceMap,
    sourcesContent: HANDLER_BUNDLING.sourcesContent,
    mainFields: [...HANDLER_BUNDLING.mainFields],
    banner: { js: HANDLER_BUNDLING.banner },
    external: HANDLER_BUNDLING.bundleAwsSDK ? [] : ['@aws-sdk/*'],
    logLevel: 'silent',
  });
  // The files the handler reads beside its bundle, copied as NodejsFunction runs the hook.
  execSync(HANDLER_BUNDLING.commandHooks.afterBundling(PROJECT_ROOT, taskRoot).join(' && '));
  return taskRoot;
}
