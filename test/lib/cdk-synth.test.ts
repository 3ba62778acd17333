import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CDK_JSON = JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8'));
const CDK_CLI = join(ROOT, 'node_modules/aws-cdk/bin/cdk');
const NETWORK_GUARD = fileURLToPath(new URL('./network-guard.cjs', import.meta.url));

/**
 * Runs the pinned CDK CLI's `synth` in a scratch project whose cdk.json is the repository's
 * with `gateway` replaced: the exact path an operator takes, offline and credential-free.
 */
async function cdkSynth(gateway: unknown, files: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string; dir: string; network: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-synth-'));
  const cdkJson = { ...CDK_JSON, app: `"${process.execPath}" "${join(ROOT, 'bin/app.ts')}"`, context: { ...CDK_JSON.context, gateway } };
  writeFileSync(join(dir, 'cdk.json'), JSON.stringify(cdkJson));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const networkLog = join(dir, 'network.log');
  writeFileSync(networkLog, '');
  // No credentials and no version check: what a fresh clone sees. The guard records any
  // non-loopback connection made by the CLI, the app or anything they start.
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: dir,
    CDK_DISABLE_VERSION_CHECK: '1',
    AWS_EC2_METADATA_DISABLED: 'true',
    NODE_OPTIONS: `--require ${NETWORK_GUARD}`,
    NETWORK_GUARD_LOG: networkLog,
  };
  return new Promise((resolve) => {
    execFile(process.execPath, [CDK_CLI, 'synth', '--quiet', '--output', join(dir, 'cdk.out')], { cwd: dir, env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr, dir, network: readFileSync(networkLog, 'utf8') });
    });
  });
}

describe('cdk synth with bin/app.ts and cdk.json', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('fails on a bad routing config, naming the field, without a stack trace', async () => {
    const gateway = { routing: { upstreams: { main: { type: 'antropic', apiKeyEnv: 'ANTHROPIC_API_KEY' } }, routes: [{ model: '*', upstream: 'main' }] } };
    const result = await cdkSynth(gateway);
    dirs.push(result.dir);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('gateway.routing');
    expect(result.stderr).toContain('upstreams.main.type: Invalid option');
    expect(result.stderr).not.toMatch(/^\s+at .*\.ts:\d+/m);
    expect(existsSync(join(result.dir, 'cdk.out', 'AgentGateway.template.json'))).toBe(false);
  });

  test('fails on a bad stack option, naming the field', async () => {
    const result = await cdkSynth({ ...CDK_JSON.context.gateway, timeoutSeconds: 3600 });
    dirs.push(result.dir);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('gateway.timeoutSeconds: Too big');
  });

  test('synthesizes offline, from a routing file named relative to the project', async () => {
    const routing = { upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }] };
    const result = await cdkSynth({ stackName: 'SynthCheck', routingFile: 'routing.json' }, { 'routing.json': JSON.stringify(routing) });
    dirs.push(result.dir);
    expect(result.stderr).not.toContain('Error');
    expect(result.code).toBe(0);
    expect(result.network).toBe('');
    const template = JSON.parse(readFileSync(join(result.dir, 'cdk.out', 'SynthCheck.template.json'), 'utf8'));
    const fn = Object.values(template.Resources as Record<string, { Type: string; Properties: any }>).find((resource) => resource.Type === 'AWS::Lambda::Function');
    expect(JSON.parse(fn?.Properties.Environment.Variables.GATEWAY_CONFIG_JSON)).toEqual(routing);
  });
});
