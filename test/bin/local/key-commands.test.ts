import { ensureKeyTable, ensureUsageTable, localDynamo, startEmbeddedStore, type EmbeddedStore } from '../../../bin/local/embedded-store.ts';
import { createKey, keyUsage, listKeys, updateKey, usageSummary, type Output } from '../../../bin/local/key-commands.ts';
import { parseLimits } from '../../../bin/local/key-options.ts';
import { DynamoKeyStore } from '../../../lambda/auth/key-store.ts';
import { DynamoUsageStore } from '../../../lambda/usage/usage-store.ts';
import { counterValues, personAccount, utcDay } from '../../../lambda/usage/usage-table.ts';

/** The key commands against dynalite: dollar budgets stored and changed, spend reported. */
describe('key commands: dollar budgets and spend', () => {
  let embedded: EmbeddedStore;
  let store: DynamoKeyStore;
  let usage: DynamoUsageStore;
  beforeAll(async () => {
    embedded = await startEmbeddedStore(undefined);
    const client = localDynamo(embedded.endpoint);
    await ensureKeyTable(client, 'keys');
    await ensureUsageTable(client, 'usage');
    store = new DynamoKeyStore('keys', client);
    usage = new DynamoUsageStore('usage', client);
  });
  afterAll(() => embedded.close());

  const capture = (json: boolean) => {
    const lines: string[] = [];
    const out: Output = { json, print: (text) => lines.push(text) };
    return { out, lines };
  };

  test('a key keeps its dollar budgets as micro-dollars; update changes and removes them', async () => {
    const created = capture(true);
    await createKey(store, { name: 'dora', limits: parseLimits({ 'usd-per-day': '0.0001', 'usd-per-month': '12.5' }, false).set, url: 'http://127.0.0.1:1' }, created.out);
    const { id } = JSON.parse(created.lines[0] as string);
    expect((await store.findById(id))?.limits).toEqual({ microUsdPerDay: 100, microUsdPerMonth: 12_500_000 });

    const listed = capture(false);
    await listKeys(store, listed.out);
    expect(listed.lines.find((line) => line.startsWith(id))).toContain('usdPerDay $0.000100, usdPerMonth $12.500000');

    await updateKey(store, id, { limits: parseLimits({ 'usd-per-day': 'none', 'usd-per-month': '40' }, true) }, capture(true).out);
    expect((await store.findById(id))?.limits).toEqual({ microUsdPerMonth: 40_000_000 });
  });

  test('usage reports spend per row and in the totals, as micro-dollars and dollars', async () => {
    const created = capture(true);
    await createKey(store, { name: 'erin', limits: {}, url: 'http://127.0.0.1:1' }, created.out);
    const { id } = JSON.parse(created.lines[0] as string);
    const at = new Date();
    const day = utcDay(at);
    await usage.add(id, day, 'claude-sonnet-5', counterValues({ inputTokens: 12, outputTokens: 850, cacheReadTokens: 45_000, cacheWriteTokens: 3_000, cacheWrite1hTokens: 3_000 }, 29_524), at);
    await usage.add(id, day, 'claude-sonnet-5', counterValues({ inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 }, 70), at);
    await usage.add(id, day, 'gpt-5.5', counterValues(undefined), at);
    // The key's owner was charged the same: the summary lists keys only.
    await usage.add(personAccount('erin-sub'), day, 'claude-sonnet-5', counterValues(undefined, 29_594), at);

    const json = capture(true);
    await keyUsage(store, usage, id, '2000-01-01', json.out);
    const report = JSON.parse(json.lines[0] as string);
    expect(report.totals).toMatchObject({ requests: 3, costMicroUsd: 29_594, costUsd: 0.029594 });
    expect(report.days).toEqual([
      expect.objectContaining({ model: 'claude-sonnet-5', requests: 2, costMicroUsd: 29_594, costUsd: 0.029594 }),
      expect.objectContaining({ model: 'gpt-5.5', requests: 1, costMicroUsd: 0, costUsd: 0 }),
    ]);

    const text = capture(false);
    await keyUsage(store, usage, id, '2000-01-01', text.out);
    expect(text.lines[0]).toContain('cost (USD)');
    expect(text.lines.at(-1)).toMatch(/^total\s+3\s.*\$0\.029594$/);

    const summary = capture(true);
    await usageSummary(store, usage, '2000-01-01', summary.out);
    const keys = JSON.parse(summary.lines[0] as string).keys as { id: string }[];
    expect(keys).toContainEqual(expect.objectContaining({ id, name: 'erin', costMicroUsd: 29_594, costUsd: 0.029594 }));
    expect(keys.map((key) => key.id)).not.toContain(personAccount('erin-sub'));
  });
});
