import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseRoutingConfig } from '../../lambda/config/routing.ts';

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
    // The config is in the function's bundle, read through GATEWAY_CONFIG_FILE.
    expect(bundledConfig(result.dir, 'SynthCheck')).toEqual(routing);
  });

  test('synthesizes offline with sign-in and a private API, the config beyond what an environment variable could hold', async () => {
    const policies = Array.from({ length: 40 }, (_, i) => ({ groups: [`team-${i}`], models: ['claude-*'], managedSettings: { env: { CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY: '1', TEAM: `team-${i}` } } }));
    const routing = {
      upstreams: { sim: { type: 'simulator' } },
      routes: [{ model: '*', upstream: 'sim' }],
      identity: { issuer: 'https://example.okta.com/oauth2/default', clientId: '0oa1example', clientSecretEnv: 'GATEWAY_IDP_CLIENT_SECRET', adminGroups: ['gateway-admins'], policies },
    };
    expect(Buffer.byteLength(JSON.stringify(routing))).toBeGreaterThan(4 * 1024);
    const privateApi = {
      domainName: 'gw.corp.example.com',
      certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/1a2b3c4d-aaaa-bbbb-cccc-1234567890ab',
      vpcId: 'vpc-0123456789abcdef0',
      subnetIds: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'],
      clientCidrs: ['10.0.0.0/8'],
      hostedZoneId: 'Z0PRIVATE123456789ABC',
    };
    const result = await cdkSynth({ stackName: 'SignInCheck', routing, privateApi });
    dirs.push(result.dir);
    expect(result.stderr).not.toContain('Error');
    expect(result.code).toBe(0);
    expect(result.network).toBe('');
    // The validated config, its defaults filled.
    expect(bundledConfig(result.dir, 'SignInCheck')).toEqual(parseRoutingConfig(routing));
    const types = Object.values(readTemplate(result.dir, 'SignInCheck').Resources).map((resource) => resource.Type);
    for (const type of ['AWS::ApiGateway::RestApi', 'AWS::ApiGateway::DomainNameV2', 'AWS::EC2::VPCEndpoint', 'AWS::SecretsManager::Secret', 'AWS::Route53::RecordSet']) expect(types).toContain(type);
  });
});

function readTemplate(dir: string, stackName: string): { Resources: Record<string, { Type: string; Properties: any }> } {
  return JSON.parse(readFileSync(join(dir, 'cdk.out', `${stackName}.template.json`), 'utf8'));
}

/** The routing config in the gateway function's bundled asset, as the function reads it. */
function bundledConfig(dir: string, stackName: string): unknown {
  const functions = Object.entries(readTemplate(dir, stackName).Resources).filter(([logicalId, resource]) => resource.Type === 'AWS::Lambda::Function' && logicalId.startsWith('Gateway'));
  expect(functions).toHaveLength(1);
  const properties = (functions[0] as [string, { Properties: any }])[1].Properties;
  expect(properties.Environment.Variables.GATEWAY_CONFIG_FILE).toBe('gateway-config.json');
  const asset = (properties.Code.S3Key as string).replace(/\.zip$/, '');
  return JSON.parse(readFileSync(join(dir, 'cdk.out', `asset.${asset}`, 'gateway-config.json'), 'utf8'));
}
