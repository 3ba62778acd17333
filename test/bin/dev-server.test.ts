import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataFolderHolder } from '../../bin/local/data-folder.ts';
import { localDynamo, LOCAL_STATS_TABLE } from '../../bin/local/embedded-store.ts';
import { Rollups } from '../../lambda/usage/rollups.ts';
import { startBedrockFake, textEvents } from '../support/bedrock-fake.ts';
import { eventually, firstKey, runKeys, startDevServer, tempDir } from '../support/processes.ts';

/**
 * `npm start` end to end: a fresh data directory, no network, no AWS account; the first start
 * prints a working key with its setup; the key CLI works while the server runs.
 */
describe('npm start', () => {
  const dataDir = tempDir('gateway-dev-');
  const env = { GATEWAY_DATA_DIR: dataDir, GATEWAY_KEY_CACHE_SECONDS: '0' };

  test('serves both endpoints with the key it prints, and the CLI manages keys while it runs', async () => {
    const server = await startDevServer(env);
    try {
      const output = server.output();
      expect(output).toContain('every model is answered by the built-in simulator');
      // Its output is a log here (a pipe): the key and its setup are in a file only this user reads.
      expect(output).not.toContain('gwk_');
      const key = firstKey(output);
      const keyFile = join(dataDir, 'first-key.txt');
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      expect(readFileSync(keyFile, 'utf8')).toContain(`export ANTHROPIC_BASE_URL=${server.url}/first`);
      expect(readFileSync(keyFile, 'utf8')).toContain(`base_url = "${server.url}/second/v1"`);

      const anthropic = new Anthropic({ baseURL: `${server.url}/first`, apiKey: key, maxRetries: 0 });
      const message = await anthropic.messages.stream({ model: 'claude-sonnet-5', max_tokens: 50, messages: [{ role: 'user', content: 'Say hi' }] }).finalMessage();
      expect(message.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('Say hi') });
      const openai = new OpenAI({ baseURL: `${server.url}/second/v1`, apiKey: key, maxRetries: 0 });
      const response = await openai.responses.stream({ model: 'gpt-5.5', input: 'Say hi' }).finalResponse();
      expect(response.output_text).toContain('Say hi');

      const created = await runKeys(['create', '--name', 'bob', '--models', 'claude-*', '--expires-in', '30d', '--json', '--url', server.url], env);
      expect(created.code).toBe(0);
      const issued = JSON.parse(created.stdout);
      expect(issued).toMatchObject({ id: expect.stringMatching(/^key_/), key: expect.stringMatching(/^gwk_/), name: 'bob', models: ['claude-*'] });
      expect(issued.setup.claudeCode.env).toEqual({ ANTHROPIC_BASE_URL: `${server.url}/first`, ANTHROPIC_AUTH_TOKEN: issued.key });
      expect(Date.parse(issued.expiresAt) - Date.now()).toBeGreaterThan(29 * 86_400_000);

      const bob = new Anthropic({ baseURL: `${server.url}/first`, apiKey: issued.key, maxRetries: 0 });
      expect((await bob.messages.create({ model: 'claude-haiku-4-5-20251001', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).type).toBe('message');
      await expect(new OpenAI({ baseURL: `${server.url}/second/v1`, apiKey: issued.key, maxRetries: 0 }).responses.create({ model: 'gpt-5.5', input: 'x' })).rejects.toMatchObject({ status: 403 });

      const listed = await runKeys(['list', '--json'], env);
      const keys = JSON.parse(listed.stdout);
      expect(keys.map((entry: { name: string }) => entry.name)).toEqual(['default', 'bob']);
      expect(listed.stdout).not.toMatch(/gwk_|keyHash/);

      const revoked = await runKeys(['revoke', issued.id], env);
      expect(revoked.code).toBe(0);
      await expect(bob.messages.create({ model: 'claude-sonnet-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
      await eventually(() => expect(server.output()).toMatch(/"msg":"request".*"status":401/));
      expect(server.output()).not.toContain(issued.key);
    } finally {
      await server.stop();
    }
  });

  test('keys persist across restarts and no second key is printed', async () => {
    const created = await runKeys(['create', '--name', 'offline', '--json'], env);
    expect(created.code).toBe(0);
    const { key } = JSON.parse(created.stdout);
    const server = await startDevServer(env);
    try {
      expect(server.output()).toContain('3 key(s) in the store');
      expect(server.output()).not.toMatch(/gwk_/);
      const sentAt = new Date();
      const response = await fetch(`${server.url}/second/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"model":"m","input":"hi"}' });
      expect(response.status).toBe(200);
      // The request is in the usage rollups at the next flush (every second), read from the running server's store.
      // The running gateway's lock record names its store (secret included).
      const endpoint = dataFolderHolder(dataDir)?.store as string;
      const rollups = new Rollups(LOCAL_STATS_TABLE, localDynamo(endpoint));
      const requestsOf = async () => (await rollups.totals('key', sentAt, new Date(), 'D')).find((entry) => entry.value === JSON.parse(created.stdout).id)?.totals.requests;
      for (const until = Date.now() + 5_000; (await requestsOf()) === undefined && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await requestsOf()).toBe(1);
    } finally {
      await server.stop();
    }
  });
});

describe('npm start with Amazon Bedrock', () => {
  // The embedded store has its own placeholder credentials; the operator's AWS credentials (here
  // from the environment, then from a named profile) are what Bedrock calls are signed with.
  const operator = { accessKeyId: 'AKIAOPERATOR00000001', secretAccessKey: 'operator-secret-key' };

  test.each([
    ['environment variables', (_dir: string) => ({ AWS_ACCESS_KEY_ID: operator.accessKeyId, AWS_SECRET_ACCESS_KEY: operator.secretAccessKey })],
    [
      'a named profile',
      (dir: string) => {
        writeFileSync(join(dir, 'credentials'), `[team]\naws_access_key_id = ${operator.accessKeyId}\naws_secret_access_key = ${operator.secretAccessKey}\n`);
        writeFileSync(join(dir, 'config'), '[profile team]\nregion = us-west-2\n');
        return { AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_PROFILE: 'team', AWS_SHARED_CREDENTIALS_FILE: join(dir, 'credentials'), AWS_CONFIG_FILE: join(dir, 'config') };
      },
    ],
  ])('signs Bedrock calls with the operator\'s credentials from %s', async (_source, credentials) => {
    const fake = await startBedrockFake({ region: 'us-west-2', credentials: [operator] });
    const dir = tempDir('gateway-bedrock-');
    const config = join(dir, 'gateway.json');
    writeFileSync(config, JSON.stringify({ upstreams: { br: { type: 'bedrock', region: 'us-west-2', baseUrl: fake.url } }, routes: [{ model: '*', upstream: 'br', upstreamModel: 'us.anthropic.claude-sonnet-5-v1:0' }] }));
    const server = await startDevServer({ GATEWAY_DATA_DIR: dir, GATEWAY_CONFIG: config, ...credentials(dir) });
    try {
      const key = firstKey(server.output());
      fake.script({ events: textEvents('Signed by the operator.') });
      const anthropic = new Anthropic({ baseURL: `${server.url}/first`, apiKey: key, maxRetries: 0 });
      const message = await anthropic.messages.stream({ model: 'claude-sonnet-5', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
      expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'Signed by the operator.' })]);
      expect(fake.requests).toHaveLength(1);
      expect(server.output()).not.toContain(operator.secretAccessKey);
    } finally {
      await server.stop();
      await fake.close();
    }
  });
});

describe('keys CLI input checks', () => {
  const env = { GATEWAY_DATA_DIR: tempDir('gateway-cli-') };

  test.each([
    [['create'], /create needs --name/],
    [['create', '--name', 'x', '--expires-in', '5 weeks'], /--expires-in must be a number and a unit/],
    [['create', '--name', 'x', '--models', ' , '], /--models needs at least one/],
    [['revoke'], /revoke needs the key id/],
    [['revoke', 'key_nope'], /No key with id key_nope/],
    [['rename'], /Unknown command "rename"/],
  ])('%j is refused with a clear message', async (args, message) => {
    const result = await runKeys(args, env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });
});
