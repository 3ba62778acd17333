import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATEWAY_CODEX_INSTRUCTIONS } from '../../lambda/formats/responses/codex-models.ts';
import { startGateway, type Harness } from '../support/gateway-harness.ts';
import { tempDir } from '../support/processes.ts';
import { fixture, sendSse, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';
import { CODEX, CODEX_OFFLINE_TABLES, codexEnv, runCodex, runProcess } from './clis.ts';
import { assertIsolated } from './isolation.ts';

/**
 * Codex's model discovery through the gateway, with the real Codex binary: a provider whose
 * credential comes from an `auth` command makes Codex read `GET <base_url>/models?client_version=…`
 * (Codex's catalog shape, docs/sign-in-reference.md "Codex's model catalog"). Codex takes the gateway's
 * entries (it drops the whole answer when an entry lacks a field it needs), only the models the
 * caller may use are in it, and an entry's instructions are what Codex then sends as its prompt.
 * Small on purpose: the full client cells are in codex.test.ts.
 */
let upstream: UpstreamStub;
let gateway: Harness;
let key: string;
let root: string;

beforeAll(async () => {
  assertIsolated();
  upstream = await startUpstream();
  gateway = await startGateway({
    config: {
      upstreams: { oai: { type: 'openai', baseUrl: `${upstream.url}/v1`, apiKeyEnv: 'OAI_KEY' } },
      routes: [
        { model: 'claude-sonnet-5', upstream: 'oai' },
        { model: 'claude-haiku-4-5', upstream: 'oai' },
        { model: 'gpt-5.5', upstream: 'oai' },
      ],
    },
    env: { OAI_KEY: 'sk-upstream' },
  });
  ({ key } = await gateway.issueKey({ models: ['claude-*'] }));
  root = tempDir('gateway-codex-discovery-');
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

/** A CODEX_HOME whose provider is the gateway, its key printed by an `auth` command (as the login helper does), nothing phoning home. */
function codexHome(model: string): string {
  const home = join(root, `home-${model}`);
  mkdirSync(home, { recursive: true });
  writeFileSync(
    join(home, 'config.toml'),
    [
      'check_for_update_on_startup = false',
      `model = ${JSON.stringify(model)}`,
      'model_provider = "gateway"',
      '[model_providers.gateway]',
      'name = "gateway"',
      `base_url = ${JSON.stringify(`${gateway.url}/second/v1`)}`,
      'wire_api = "responses"',
      'supports_websockets = false',
      '[model_providers.gateway.auth]',
      'command = "/bin/echo"',
      `args = [${JSON.stringify(key)}]`,
      ...CODEX_OFFLINE_TABLES,
      '',
    ].join('\n'),
  );
  return home;
}

test(`Codex ${CODEX.version} takes the gateway's catalog: the models the key may use, with the gateway's metadata`, async () => {
  const home = codexHome('claude-sonnet-5');
  const run = await runProcess(CODEX.binary, ['debug', 'models'], { env: codexEnv({}, home), cwd: home, timeoutMs: 60_000 });
  expect(run.code).toBe(0);
  const catalog = JSON.parse(run.stdout) as { models: { slug: string; description?: string | null; base_instructions?: string; priority: number }[] };
  const fromGateway = catalog.models.filter((model) => model.description?.startsWith('Served through the gateway'));
  expect(fromGateway.map((model) => [model.slug, model.priority, model.base_instructions])).toEqual([
    ['claude-sonnet-5', 1, GATEWAY_CODEX_INSTRUCTIONS],
    ['claude-haiku-4-5', 2, GATEWAY_CODEX_INSTRUCTIONS],
  ]);
  // gpt-5.5 is routed but outside the key's allowlist: not offered (Codex keeps only its own built-in entry of that name).
  expect(fromGateway.some((model) => model.slug === 'gpt-5.5')).toBe(false);
  const asked = gateway.logs.filter((line) => line.route === 'responses_models');
  expect(asked.length).toBeGreaterThan(0);
  expect(asked.every((line) => line.status === 200)).toBe(true);
});

test("a turn with a catalogued model sends the entry's instructions as Codex's prompt, in the classic request shape", async () => {
  upstream.reply(sendSse(fixture('openai/text-stream.sse')));
  const home = codexHome('claude-haiku-4-5');
  const run = await runCodex(['exec', '--json', '--skip-git-repo-check', 'Say hi.'], { env: codexEnv({}, home), cwd: home, timeoutMs: 90_000 });
  expect(run.code).toBe(0);
  expect(run.stderr).not.toContain('Model metadata for');
  const sent = JSON.parse(upstream.requests.at(-1)?.body ?? '{}') as { model?: string; input?: { role?: string; content?: { text?: string }[] }[]; tools?: unknown[] };
  expect(sent.model).toBe('claude-haiku-4-5');
  expect(sent.input?.[0]).toMatchObject({ role: 'developer', content: [{ text: GATEWAY_CODEX_INSTRUCTIONS }] });
  expect(Array.isArray(sent.tools)).toBe(true);
});
