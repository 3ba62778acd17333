import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureIdentityTable, ensureKeyTable, ensureUsageTable, localDynamo, LOCAL_IDENTITY_TABLE, LOCAL_USAGE_TABLE, startEmbeddedStore } from '../../../bin/local/embedded-store.ts';
import { IdentityOperations } from '../../../lambda/identity/operators.ts';
import { periodEnd } from '../../../lambda/usage/limits.ts';
import { DynamoUsageStore } from '../../../lambda/usage/usage-store.ts';
import { utcDay } from '../../../lambda/usage/usage-table.ts';
import { runKeys, tempDir } from '../../support/processes.ts';

/**
 * The key CLI's `people show` and `people set-caps` against npm start's embedded store (the
 * person and their spend put there as the gateway puts them): effective models and caps with
 * where each comes from, spend per period, own caps set and dropped again, each change audited.
 */
const dataDir = tempDir('gateway-people-policy-');
const configFile = join(dataDir, 'gateway.json');
const env = { GATEWAY_DATA_DIR: dataDir };

async function withStore<T>(work: (identity: IdentityOperations, usage: DynamoUsageStore) => Promise<T>): Promise<T> {
  const store = await startEmbeddedStore(dataDir);
  try {
    const client = localDynamo(store.endpoint);
    await Promise.all([ensureKeyTable(client, 'gateway-keys'), ensureUsageTable(client, LOCAL_USAGE_TABLE), ensureIdentityTable(client)]);
    return await work(new IdentityOperations(LOCAL_IDENTITY_TABLE, client), new DynamoUsageStore(LOCAL_USAGE_TABLE, client));
  } finally {
    await store.close();
  }
}

const show = async () => {
  const run = await runKeys(['people', 'show', 'alice@example.com', '--config', configFile, '--json'], env);
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as { caps: { period: string; limitUsd: number | null; source: Record<string, string>; spentUsd: number; resetsAt: string }[]; models: string[]; groups: string[]; pools: unknown[]; managedSettingsChecksum?: string };
};

beforeAll(async () => {
  writeFileSync(
    configFile,
    JSON.stringify({
      upstreams: { sim: { type: 'simulator' } },
      routes: [{ model: '*', upstream: 'sim' }],
      identity: {
        issuer: 'https://idp.example.com',
        clientId: 'gateway',
        policies: [{ groups: ['interns'], models: ['claude-haiku-*'], managedSettings: { availableModels: ['haiku'] } }, { models: ['claude-*'] }],
        caps: { default: { daily: 10, weekly: 30 }, groups: { interns: { daily: 5 } }, pools: { interns: { monthly: 200 } } },
      },
    }),
  );
  await withStore(async (identity, usage) => {
    await identity.people.seen({ sub: 'alice', email: 'alice@example.com', groups: ['interns', 'engineering'] }, Date.now());
    await usage.add('person#alice', utcDay(new Date()), 'claude-sonnet-5', { requests: 3, costMicroUsd: 1_234_567 }, new Date());
  });
});

test('people show: groups, models, each cap with its source and the spend against it, pools', async () => {
  const summary = await show();
  const now = new Date();
  expect(summary).toMatchObject({ groups: ['interns', 'engineering'], models: ['claude-haiku-*'], pools: [{ group: 'interns', monthlyUsd: 200 }], managedSettingsChecksum: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
  expect(summary.caps).toEqual([
    { period: 'day', limitUsd: 5, source: { from: 'group', group: 'interns' }, spentUsd: 1.234567, resetsAt: new Date(periodEnd('day', now)).toISOString() },
    { period: 'week', limitUsd: 30, source: { from: 'default' }, spentUsd: 1.234567, resetsAt: new Date(periodEnd('week', now)).toISOString() },
    { period: 'month', limitUsd: null, source: { from: 'none' }, spentUsd: 1.234567, resetsAt: new Date(periodEnd('month', now)).toISOString() },
  ]);
  const text = await runKeys(['people', 'show', 'alice', '--config', configFile], env);
  expect(text.stdout).toContain('alice@example.com  alice  [interns,engineering]');
  expect(text.stdout).toMatch(/day\s+\$5\.00\s+group interns\s+spent \$1\.23/);
});

test('people set-caps: own caps win, none is no cap, inherit drops them again; audited; bad values refused before anything changes', async () => {
  const set = await runKeys(['people', 'set-caps', 'alice@example.com', '--daily', '7.5', '--monthly', 'none', '--json'], env);
  expect(set.code).toBe(0);
  expect(JSON.parse(set.stdout)).toMatchObject({ sub: 'alice', before: {}, after: { daily: 7.5, monthly: null } });
  expect((await show()).caps.map((cap) => [cap.period, cap.limitUsd, cap.source.from])).toEqual([
    ['day', 7.5, 'person'],
    ['week', 30, 'default'],
    ['month', null, 'person'],
  ]);
  expect((await runKeys(['people', 'set-caps', 'alice', '--daily', 'inherit'], env)).code).toBe(0);
  expect((await show()).caps[0]).toMatchObject({ limitUsd: 5, source: { from: 'group', group: 'interns' } });

  for (const bad of [['--daily', 'lots'], ['--weekly', '-3'], []]) {
    const refused = await runKeys(['people', 'set-caps', 'alice', ...bad], env);
    expect([bad, refused.code]).toEqual([bad, 2]);
  }
  expect((await runKeys(['people', 'show', 'alice'], { ...env, GATEWAY_CONFIG: join(dataDir, 'missing.json') })).stderr).toContain('Cannot read the gateway config');
  expect((await runKeys(['people', 'set-caps', 'nobody@example.com', '--daily', '1'], env)).code).toBe(2);
  const broken = join(dataDir, 'broken.json');
  writeFileSync(broken, '{\n  "upstreams": {},\n  "routes": [');
  expect((await runKeys(['people', 'show', 'alice', '--config', broken], env)).stderr).toContain('not valid JSON at line 3, column 14');

  const events = await withStore((identity) => identity.audit.day(utcDay(new Date())));
  expect(events.filter((event) => event.type === 'person_caps_changed').map((event) => [event.sub, event.actor, event.via, event.detail])).toEqual([
    ['alice', 'operator', 'keys people set-caps', 'daily=inherit weekly=inherit monthly=inherit -> daily=7.5 weekly=inherit monthly=none'],
    ['alice', 'operator', 'keys people set-caps', 'daily=7.5 weekly=inherit monthly=none -> daily=inherit weekly=inherit monthly=none'],
  ]);
});
