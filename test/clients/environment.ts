import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClientSetup } from '../../bin/local/setup-text.ts';
import { runKeys, tempDir, type RunningServer } from '../support/processes.ts';
import { CODEX } from './clis.ts';
import { gatewayCatalog, LITE_TEMPLATE } from './codex-catalog.ts';
import { CODEX_ROUTES, FALLBACK_ROUTES, routingConfig, STUB_FORMAT, UPSTREAM_SECRETS, type StubName } from './routes.ts';
import { startTap, type Tap } from './tap.ts';
import { BEDROCK_CREDENTIALS, ScriptedBedrock } from './upstream/scripted-bedrock.ts';
import { ScriptedUpstream } from './upstream/scripted-upstream.ts';
import type { Json } from './upstream/wire.ts';

/**
 * One gateway for a test file, set up the way a user would: `npm start`'s entry
 * (bin/dev-server.ts) with a routing config file and its own data directory, and a key made by
 * the key CLI, whose printed `setup` configures the CLIs. Behind it, scripted loopback upstreams
 * (one per upstream format, and Bedrock, which the gateway signs for with the AWS credentials in
 * its environment); in front of it, the recording tap.
 */
export interface IssuedKey {
  id: string;
  key: string;
  setup: ClientSetup;
}

export interface ClientsEnvironment {
  root: string;
  gateway: RunningServer;
  tap: Tap;
  stubs: Record<StubName, ScriptedUpstream>;
  issued: IssuedKey;
  catalogPath: string;
  /** A fresh directory under the suite's temp root. */
  dir(name: string): string;
  /** The gateway's per-request log lines (JSON) since the last reset, in order. */
  gatewayLogs(): Json[];
  createKey(name: string): Promise<IssuedKey>;
  revokeKey(id: string): Promise<void>;
  /** `npm run keys -- update ID <args>` (limits, models...). */
  updateKey(id: string, args: string[]): Promise<void>;
  /** Clears the tap and every stub's script and records before a scenario. */
  reset(): void;
  close(): Promise<void>;
}

/** The same key with the CLIs pointed at another base address (a user's mistake). */
export function withBase(issued: IssuedKey, base: { claudeCode?: string; codex?: string }): IssuedKey {
  const claudeEnv = { ...issued.setup.claudeCode.env, ...(base.claudeCode === undefined ? {} : { ANTHROPIC_BASE_URL: base.claudeCode }) };
  const profileToml = base.codex === undefined ? issued.setup.codex.profileToml : issued.setup.codex.profileToml.replace(/^base_url = ".*"$/m, `base_url = "${base.codex}"`);
  return {
    ...issued,
    setup: { ...issued.setup, claudeCode: { ...issued.setup.claudeCode, env: claudeEnv, settingsJson: `${JSON.stringify({ env: claudeEnv }, null, 2)}\n` }, codex: { ...issued.setup.codex, profileToml } },
  };
}

export async function startEnvironment(label: string): Promise<ClientsEnvironment> {
  const root = tempDir(`gateway-clients-${label}-`);
  const stubs = {
    anthropic: await new ScriptedUpstream(STUB_FORMAT.anthropic).start(),
    openai: await new ScriptedUpstream(STUB_FORMAT.openai).start(),
    chat: await new ScriptedUpstream(STUB_FORMAT.chat).start(),
    bedrock: await new ScriptedBedrock().start(),
  };
  const configPath = join(root, 'routing.json');
  writeFileSync(configPath, JSON.stringify(routingConfig({ anthropic: stubs.anthropic.url, openai: stubs.openai.url, chat: stubs.chat.url, bedrock: stubs.bedrock.url }), null, 2));
  const env = { GATEWAY_CONFIG: configPath, GATEWAY_DATA_DIR: join(root, 'data'), GATEWAY_KEY_CACHE_SECONDS: '0', ...UPSTREAM_SECRETS };
  // The operator's AWS credentials, as `npm start` finds them in its environment (the standard chain).
  const aws = { AWS_ACCESS_KEY_ID: BEDROCK_CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: BEDROCK_CREDENTIALS.secretAccessKey, AWS_SESSION_TOKEN: BEDROCK_CREDENTIALS.sessionToken };
  const gateway = await startGatewayProcess({ ...env, ...aws });
  const tap = await startTap(gateway.url, label);

  const createKey = async (name: string): Promise<IssuedKey> => {
    // `npm run --silent keys -- create --name NAME --json --url URL`: the URL the CLIs use is the tap's.
    const created = await runKeys(['create', '--name', name, '--json', '--url', tap.url], env);
    if (created.code !== 0) throw new Error(`keys create failed (${created.code}): ${created.stderr}`);
    const parsed = JSON.parse(created.stdout) as IssuedKey;
    return { id: parsed.id, key: parsed.key, setup: parsed.setup };
  };
  const issued = await createKey(`conformance-${label}`);

  const catalogPath = join(root, 'codex-catalog.json');
  // The classic names as copies of the gpt-5.5 entry, the lite names of the gpt-6.2-sol one (Codex's default family).
  const classic = gatewayCatalog(CODEX.binary, [...CODEX_ROUTES.flatMap((route) => (route.alias ? [route.model, route.alias.model] : [route.model])), FALLBACK_ROUTES.codex.model]);
  const lite = gatewayCatalog(CODEX.binary, CODEX_ROUTES.flatMap((route) => (route.lite ? [route.lite] : [])), LITE_TEMPLATE);
  writeFileSync(catalogPath, JSON.stringify({ models: [...classic.models, ...lite.models] }));

  let logsSeen = 0;
  const allLogs = () =>
    gateway
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{') && line.includes('"msg":"request"'))
      .map((line) => JSON.parse(line) as Json);
  return {
    root,
    gateway,
    tap,
    stubs,
    issued,
    catalogPath,
    dir: numberedDirs(root),
    gatewayLogs() {
      return allLogs().slice(logsSeen);
    },
    createKey,
    async updateKey(id, args) {
      const updated = await runKeys(['update', id, ...args], env);
      if (updated.code !== 0) throw new Error(`keys update failed (${updated.code}): ${updated.stderr}`);
    },
    async revokeKey(id) {
      const revoked = await runKeys(['revoke', id], env);
      if (revoked.code !== 0) throw new Error(`keys revoke failed (${revoked.code}): ${revoked.stderr}`);
    },
    reset() {
      logsSeen = allLogs().length;
      tap.reset();
      for (const stub of Object.values(stubs)) stub.script();
    },
    async close() {
      await tap.close();
      await gateway.stop();
      for (const stub of Object.values(stubs)) await stub.close();
      if (process.env.CLIENTS_KEEP_TEMP !== '1') rmSync(root, { recursive: true, force: true });
    },
  };
}

/** `dir(name)`: a fresh folder under `root`, numbered in the order asked for (`003-codex-home`), so a kept run reads in order. */
export function numberedDirs(root: string): (name: string) => string {
  let dirs = 0;
  return (name) => {
    const path = join(root, `${String(++dirs).padStart(3, '0')}-${name}`);
    mkdirSync(path, { recursive: true });
    return path;
  };
}

const ROOT = new URL('../../', import.meta.url).pathname;

/**
 * `npm start`'s entry with the suite's routing config. (test/support/processes.ts startDevServer
 * cannot be used for this: its childEnv() deletes GATEWAY_CONFIG, so it always runs the default
 * config — all-simulator without provider keys.)
 */
async function startGatewayProcess(extra: Record<string, string>): Promise<RunningServer> {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', ...extra };
  delete env.ANTHROPIC_API_KEY;
  delete env.OPENAI_API_KEY;
  delete env.AWS_PROFILE;
  const child = spawn(process.execPath, ['bin/dev-server.ts'], { cwd: ROOT, env });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${output}`)), 30_000);
    const check = () => {
      const match = /Gateway listening on (http:\/\/\S+)/.exec(output);
      if (match && output.includes('\nReady.')) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => reject(new Error(`gateway exited with ${code}:\n${output}`)));
  });
  if (!output.includes(`Routing config: ${extra.GATEWAY_CONFIG}`)) throw new Error(`gateway did not load ${extra.GATEWAY_CONFIG}:\n${output}`);
  return {
    url,
    output: () => output,
    process: child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
