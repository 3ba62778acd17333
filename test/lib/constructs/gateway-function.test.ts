import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { HANDLER_BUNDLING } from '../../../lib/constructs/gateway-function.ts';
import { onlyResource, synthGateway } from '../synth.ts';

describe('GatewayFunction', () => {
  test('bundle target and Lambda runtime are the same Node major', () => {
    const runtime = onlyResource(synthGateway().template, 'AWS::Lambda::Function', 'Gateway').properties.Runtime as string;
    expect(runtime).toMatch(/^nodejs\d+\.x$/);
    expect(HANDLER_BUNDLING.target).toBe(runtime.replace(/^nodejs(\d+)\.x$/, 'node$1'));
  });

  test('synthesizes with the real esbuild bundle: one ESM file with the require banner and a source map without sources', () => {
    const { app, template } = synthGateway({}, { bundle: true });
    const assembly = app.synth();
    const code = onlyResource(template, 'AWS::Lambda::Function', 'Gateway').properties.Code as { S3Key: string };
    const assetHash = code.S3Key.replace(/\.zip$/, '');
    const assetDir = join(assembly.directory, `asset.${assetHash}`);

    const bundle = readFileSync(join(assetDir, 'index.mjs'), 'utf8');
    expect(bundle.startsWith(HANDLER_BUNDLING.banner)).toBe(true);
    // lambda/handler.ts made it in: it reads its environment contract.
    expect(bundle).toContain('GATEWAY_CONFIG_JSON');
    const map = JSON.parse(readFileSync(join(assetDir, 'index.mjs.map'), 'utf8')) as { sources: string[]; sourcesContent?: unknown };
    expect(map.sources.some((source) => source.endsWith('lambda/handler.ts'))).toBe(true);
    expect(map.sourcesContent).toBeUndefined();
    expect(statSync(join(assetDir, 'index.mjs')).size).toBeLessThan(500_000);
  });
});
