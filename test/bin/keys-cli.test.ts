import Anthropic from '@anthropic-ai/sdk';
import { runKeys, startDevServer, tempDir, type RunningServer } from '../support/processes.ts';

/** The key CLI's usage, update and rotate commands against a running `npm start`. */
describe('keys usage, update, rotate', () => {
  const env = { GATEWAY_DATA_DIR: tempDir('gateway-keys-'), GATEWAY_KEY_CACHE_SECONDS: '0' };
  let server: RunningServer;

  beforeAll(async () => {
    server = await startDevServer(env);
  });
  afterAll(() => server.stop());

  const json = async (args: string[]) => {
    const result = await runKeys([...args, '--json'], env);
    if (result.code !== 0) throw new Error(`keys ${args.join(' ')} failed: ${result.stderr}`);
    return JSON.parse(result.stdout);
  };

  test('usage per key and across keys equals what the clients were told; limits can be changed; rotation overlaps', async () => {
    const created = await json(['create', '--name', 'carol', '--rpm', '100', '--tokens-per-day', '1000000', '--max-tokens', '500', '--url', server.url]);
    expect(created.limits).toEqual({ requestsPerMinute: 100, tokensPerDay: 1000000, maxOutputTokens: 500 });
    const carol = new Anthropic({ baseURL: `${server.url}/first`, apiKey: created.key, maxRetries: 0 });
    let input = 0;
    let output = 0;
    for (const content of ['one', 'two two', 'three three three']) {
      const message = await carol.messages.create({ model: 'claude-sonnet-5', max_tokens: 50, messages: [{ role: 'user', content }] });
      input += message.usage.input_tokens;
      output += message.usage.output_tokens;
    }
    // Usage is written when each response has ended: poll briefly.
    let usage: Record<string, any> = {};
    for (let attempt = 0; attempt < 50 && usage.totals?.requests !== 3; attempt++) {
      usage = await json(['usage', created.id]);
      if (usage.totals.requests !== 3) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(usage.totals).toMatchObject({ requests: 3, inputTokens: input, outputTokens: output, totalTokens: input + output, costUsd: expect.any(Number) });
    expect(usage.days).toEqual([expect.objectContaining({ model: 'claude-sonnet-5', requests: 3 })]);
    const summary = await json(['usage', '--since', '1d']);
    expect(summary.keys).toContainEqual(expect.objectContaining({ id: created.id, name: 'carol', requests: 3 }));

    const updated = await json(['update', created.id, '--rpm', 'none', '--models', 'claude-*', '--name', 'carol-ci', '--usd-per-day', '0.5']);
    expect(updated).toMatchObject({ name: 'carol-ci', models: ['claude-*'], limits: { tokensPerDay: 1000000, maxOutputTokens: 500, microUsdPerDay: 500_000 } });
    expect(updated.limits.requestsPerMinute).toBeUndefined();

    const rotated = await json(['rotate', created.id, '--overlap', '1h', '--url', server.url]);
    expect(rotated).toMatchObject({ id: created.id, name: 'carol-ci', models: ['claude-*'], key: expect.stringMatching(/^gwk_/) });
    expect(rotated.key).not.toBe(created.key);
    const listed = (await json(['list'])).filter((record: { id: string }) => record.id === created.id);
    expect(listed).toHaveLength(2);
    expect(Date.parse(listed[0].expiresAt) - Date.now()).toBeGreaterThan(3_500_000);
    for (const key of [created.key, rotated.key]) {
      await new Anthropic({ baseURL: `${server.url}/first`, apiKey: key, maxRetries: 0 }).messages.create({ model: 'claude-sonnet-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
    }
    await json(['revoke', created.id]);
    for (const key of [created.key, rotated.key]) {
      await expect(new Anthropic({ baseURL: `${server.url}/first`, apiKey: key, maxRetries: 0 }).messages.create({ model: 'claude-sonnet-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 401 });
    }
  });

  test('create prints the setup for the address the running server listens on; revoke says when it takes effect', async () => {
    // No --url: the server runs on a port of its own (PORT=0), not 8787.
    const created = await json(['create', '--name', 'where']);
    expect(created.setup.claudeCode.env.ANTHROPIC_BASE_URL).toBe(`${server.url}/first`);
    const text = await runKeys(['create', '--name', 'where-text'], env);
    expect(text.stdout).toContain(`export ANTHROPIC_BASE_URL=${server.url}/first`);
    expect(text.stdout).not.toContain(':8787');
    const revoked = await runKeys(['revoke', created.id], env);
    // This server trusts a looked-up key for 0 s (GATEWAY_KEY_CACHE_SECONDS).
    expect(revoked.stdout.trim()).toBe(`Revoked ${created.id}. The running gateway refuses it from now on.`);
    expect(await json(['revoke', created.id])).toEqual({ id: created.id, revoked: true, effectiveWithinSeconds: 0 });
  });

  test.each([
    [['create', '--name', 'x', '--rpm', '0'], /--rpm must be a whole number above 0; got "0"/],
    [['create', '--name', 'x', '--tokens-per-day', '1.5'], /--tokens-per-day must be a whole number above 0; got "1.5"/],
    [['create', '--name', 'x', '--max-tokens', 'none'], /--max-tokens must be a whole number above 0; got "none"/],
    [['update', 'key_x', '--tokens-per-month=-5'], /--tokens-per-month must be a whole number above 0 \(or none to remove the limit\); got "-5"/],
    [['update', 'key_x'], /No key with id key_x/],
    [['usage', '--since', 'yesterday'], /--since must be a date/],
    [['create', '--name', 'x', '--usd-per-day', '0.0000001'], /--usd-per-day must be an amount in US dollars above 0 with at most 6 decimals, like 25 or 0.0001; got "0.0000001"/],
    [['rotate', 'key_x', '--overlap', 'soon'], /--overlap must be a number and a unit/],
    [['create', '--name', 'x', '--bogus'], /Unknown option '--bogus'/],
  ])('%j is refused with a clear message and nothing is written', async (args, message) => {
    const before = (await json(['list'])).length;
    const result = await runKeys(args, env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect((await json(['list'])).length).toBe(before);
  });
});
