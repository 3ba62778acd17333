import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { missingCredentials, readRoutingConfig } from '../../../bin/local/routing-config.ts';
import { parseRoutingConfig } from '../../../lambda/config/routing.ts';
import { childEnv, firstKey, startDevServer, tempDir } from '../../support/processes.ts';

/** npm start's routing config: where a broken file breaks, and which routes lack their upstream's key. */
const dir = tempDir('gateway-routing-config-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

const CONFIG = {
  upstreams: {
    anthropic: { type: 'anthropic', apiKeyEnv: 'TEST_ANTHROPIC_KEY' },
    pool: { type: 'openai', apiKeyEnv: ['TEST_POOL_1', 'TEST_POOL_2'] },
    local: { type: 'openai-chat', baseUrl: 'http://127.0.0.1:9/v1' },
    bedrock: { type: 'bedrock', region: 'us-east-1' },
    sim: { type: 'simulator' },
  },
  routes: [
    { model: 'claude-*', upstream: 'anthropic' },
    { model: 'gpt-5.5', upstream: 'pool', fallbacks: [{ upstream: 'anthropic', upstreamModel: 'claude-sonnet-5' }] },
    { model: 'local-*', upstream: 'local' },
    { model: 'bedrock-*', upstream: 'bedrock', upstreamModel: 'anthropic.claude-haiku-4-5-20251001-v1:0' },
    { model: '*', upstream: 'sim' },
  ],
};

test('a broken JSON file is named with line and column, and the line itself', () => {
  const path = file('broken.json', '{\n  "upstreams": { "sim": { "type": "simulator" } }\n  "routes": []\n}\n');
  expect(() => readRoutingConfig({ GATEWAY_CONFIG: path })).toThrow(
    `Cannot use GATEWAY_CONFIG=${path}: not valid JSON at line 3, column 3: Expected ',' or '}' after property value\n  3 |   "routes": []\n    |   ^`,
  );
  const cut = file('cut.json', '{\n  "routes": [\n');
  expect(() => readRoutingConfig({ GATEWAY_CONFIG: cut })).toThrow(/not valid JSON at line 2, column 14: Unexpected end of JSON input/);
});

test('an upstream whose key variable is unset is warned about with the routes that send to it; keyless upstreams are not', () => {
  const config = parseRoutingConfig(CONFIG);
  expect(missingCredentials(config, { TEST_POOL_1: 'sk-1' })).toEqual([
    'Warning: TEST_ANTHROPIC_KEY is not set: upstream "anthropic" (routes "claude-*", "gpt-5.5") fails its requests until it is.',
    'Warning: TEST_POOL_2 is not set: upstream "pool" (route "gpt-5.5") fails its requests until it is.',
  ]);
  expect(missingCredentials(config, { TEST_ANTHROPIC_KEY: 'sk-ant', TEST_POOL_1: 'sk-1', TEST_POOL_2: 'sk-2' })).toEqual([]);
});

test('npm start prints the warning and starts; the route then fails (500; the variable is named in the log only)', async () => {
  const server = await startDevServer({ GATEWAY_CONFIG: file('routing.json', JSON.stringify(CONFIG)), GATEWAY_DATA_DIR: join(dir, 'data'), TEST_POOL_1: 'sk-1', TEST_POOL_2: 'sk-2' });
  try {
    expect(server.output()).toContain('Warning: TEST_ANTHROPIC_KEY is not set: upstream "anthropic" (routes "claude-*", "gpt-5.5") fails its requests until it is.');
    const key = firstKey(server.output());
    const response = await fetch(`${server.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }) });
    expect(response.status).toBe(500);
  } finally {
    await server.stop();
  }
});

test('npm start refuses a broken config with its line and column, and no stack trace', async () => {
  const path = file('broken-start.json', '{ "upstreams": {}, }');
  const child = spawn(process.execPath, ['bin/dev-server.ts'], { cwd: new URL('../../../', import.meta.url).pathname, env: childEnv({ GATEWAY_CONFIG: path, GATEWAY_DATA_DIR: join(dir, 'never'), PORT: '0' }) });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  expect(code).toBe(1);
  expect(output).toBe(`Cannot use GATEWAY_CONFIG=${path}: not valid JSON at line 1, column 20: Expected double-quoted property name\n  1 | { "upstreams": {}, }\n    |                    ^\n`);
});

test('the default config: without provider keys each family goes to the simulator speaking its provider\'s format, so other clients are translated', () => {
  const offline = readRoutingConfig({});
  expect(offline.config.upstreams).toEqual({ 'simulator-anthropic': { type: 'simulator', speaks: 'messages' }, 'simulator-openai': { type: 'simulator', speaks: 'responses' }, simulator: { type: 'simulator' } });
  const upstreamOf = (config: typeof offline.config, model: string) => config.routes.find((route) => new RegExp(`^${route.model.replace(/\*/g, '.*')}$`).test(model))?.upstream;
  expect(['claude-opus-5-5', 'gpt-6.2-sol', 'o3', 'llama-3'].map((model) => upstreamOf(offline.config, model))).toEqual(['simulator-anthropic', 'simulator-openai', 'simulator-openai', 'simulator']);
  expect(offline.warnings).toEqual([]);
  const half = readRoutingConfig({ ANTHROPIC_API_KEY: 'sk-ant' });
  expect(['claude-opus-5-5', 'gpt-6.2-sol', 'llama-3'].map((model) => upstreamOf(half.config, model))).toEqual(['anthropic', 'simulator-openai', undefined]);
  expect(half.notice).toBe("Default routes: claude-* -> Anthropic; gpt-*, o* -> the simulator (OpenAI's format). Other models are not routed.");
});
