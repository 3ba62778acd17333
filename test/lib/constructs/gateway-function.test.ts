import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { App } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import * as esbuild from 'esbuild';
import { DIST_DIR } from '../../../bin/build-console.ts';
import { parseRoutingConfig } from '../../../lambda/config/routing.ts';
import { CONFIG_FILE_NAME } from '../../../lib/constructs/config-file.ts';
import { consoleAssetHooks } from '../../../lib/constructs/console-assets.ts';
import { FILES_BESIDE_BUNDLE, RUNTIME_CLIENT_FILE, RUNTIME_WRAPPER_FILE, RUNTIME_WRAPPER_PATH } from '../../../lib/bundle-files.ts';
import { HANDLER_BUNDLING, PROJECT_ROOT } from '../../../lib/constructs/gateway-function.ts';
import { onlyResource, synthGateway } from '../synth.ts';

describe('GatewayFunction', () => {
  test('bundle target and Lambda runtime are the same Node major', () => {
    const runtime = onlyResource(synthGateway().template, 'AWS::Lambda::Function', 'Gateway').properties.Runtime as string;
    expect(runtime).toMatch(/^nodejs\d+\.x$/);
    expect(HANDLER_BUNDLING.target).toBe(runtime.replace(/^nodejs(\d+)\.x$/, 'node$1'));
  });

  test('synthesizes with the real esbuild bundle: one ESM file with the require banner and a source map without sources', () => {
    const { app, template } = synthGateway({}, { bundle: true });
    const assetDir = bundledAsset(app, template);

    const bundle = readFileSync(join(assetDir, 'index.mjs'), 'utf8');
    expect(bundle.startsWith(HANDLER_BUNDLING.banner)).toBe(true);
    // lambda/handler.ts made it in: it reads its environment contract.
    expect(bundle).toContain('GATEWAY_CONFIG_FILE');
    const map = JSON.parse(readFileSync(join(assetDir, 'index.mjs.map'), 'utf8')) as { sources: string[]; sourcesContent?: unknown };
    expect(map.sources.some((source) => source.endsWith('lambda/handler.ts'))).toBe(true);
    expect(map.sourcesContent).toBeUndefined();
    expect(statSync(join(assetDir, 'index.mjs')).size).toBeLessThan(500_000);
    // The login helper the handler serves (GET /login/helper.mjs) is beside the bundle, as in the repository.
    for (const file of FILES_BESIDE_BUNDLE) expect(readFileSync(join(assetDir, basename(file)), 'utf8')).toBe(readFileSync(join(PROJECT_ROOT, file), 'utf8'));
    // The runtime starts through the wrapper: it is in the asset where the environment names it, and
    // executable (Lambda refuses to start a function whose wrapper is not, and the zip keeps the mode).
    const environment = (onlyResource(template, 'AWS::Lambda::Function', 'Gateway').properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(environment.AWS_LAMBDA_EXEC_WRAPPER).toBe(RUNTIME_WRAPPER_PATH);
    expect(basename(RUNTIME_WRAPPER_PATH)).toBe(basename(RUNTIME_WRAPPER_FILE));
    expect(statSync(join(assetDir, basename(RUNTIME_WRAPPER_FILE))).mode & 0o777).toBe(0o755);
    // Beside it, the gateway's runtime client it runs (lambda/runtime-client/, bundled), and no
    // GATEWAY_RUNTIME_CLIENT: ours is the default.
    expect(readFileSync(join(assetDir, RUNTIME_CLIENT_FILE), 'utf8')).toContain('/2018-06-01/runtime');
    expect(environment.GATEWAY_RUNTIME_CLIENT).toBeUndefined();
    // The console page beside it, as committed (lambda/admin/assets.ts reads ./ui/dist from index.mjs).
    for (const file of ['index.html', 'manifest.json', ...Object.values(JSON.parse(readFileSync(join(DIST_DIR, 'manifest.json'), 'utf8')) as string[]).map((name) => `assets/${name}`)]) {
      expect([file, readFileSync(join(assetDir, 'ui', 'dist', file)).equals(readFileSync(join(DIST_DIR, file)))]).toEqual([file, true]);
    }
  });

  test('bundled, the console module finds the page beside the bundle, where the hooks copy it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'console-bundle-'));
    await esbuild.build({ entryPoints: ['lambda/admin/assets.ts'], absWorkingDir: PROJECT_ROOT, bundle: true, platform: 'node', format: 'esm', outfile: join(dir, 'index.mjs'), logLevel: 'silent' });
    for (const command of consoleAssetHooks().afterBundling(PROJECT_ROOT.replace(/\/$/, ''), dir)) execFileSync('/bin/sh', ['-c', command]);
    const { ConsoleAssets } = (await import(pathToFileURL(join(dir, 'index.mjs')).href)) as typeof import('../../../lambda/admin/assets.ts');
    const page = new ConsoleAssets().answer('/admin', undefined, 'https://gw.example.com');
    expect(page?.statusCode).toBe(200);
    expect(await new Response(page?.body as ReadableStream).text()).toBe(readFileSync(join(DIST_DIR, 'index.html'), 'utf8'));
  });

  test("runtimeClient 'aws' keeps AWS's runtime client (the wrapper reads GATEWAY_RUNTIME_CLIENT); another value is refused", () => {
    const { template } = synthGateway({ runtimeClient: 'aws' });
    const environment = (onlyResource(template, 'AWS::Lambda::Function', 'Gateway').properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(environment).toMatchObject({ GATEWAY_RUNTIME_CLIENT: 'aws', AWS_LAMBDA_EXEC_WRAPPER: RUNTIME_WRAPPER_PATH });
    expect(() => synthGateway({ runtimeClient: 'custom' })).toThrow(/runtimeClient/);
  });

  test('the routing config is a file beside the bundle, and a change to it is a new asset (so a deploy carries it)', () => {
    const { app, template, config } = synthGateway({}, { bundle: true });
    const assetDir = bundledAsset(app, template);
    expect(readdirSync(assetDir).sort()).toEqual(['gateway-config.json', 'gateway-login.mjs', 'index.mjs', 'index.mjs.map', 'runtime-client.mjs', 'runtime-wrapper.sh', 'ui']);
    const file = readFileSync(join(assetDir, CONFIG_FILE_NAME), 'utf8');
    expect(parseRoutingConfig(JSON.parse(file))).toEqual(config.routing);
    expect(file).toBe(JSON.stringify(config.routing));

    const changed = synthGateway({ routing: { ...config.routing, routes: config.routing.routes.slice(1) } }, { bundle: true });
    expect(bundledAsset(changed.app, changed.template)).not.toBe(assetDir);
  });
});

/** The directory of the gateway function's bundled asset. */
function bundledAsset(app: App, template: Template): string {
  const code = onlyResource(template, 'AWS::Lambda::Function', 'Gateway').properties.Code as { S3Key: string };
  return join(app.synth().directory, `asset.${code.S3Key.replace(/\.zip$/, '')}`);
}
