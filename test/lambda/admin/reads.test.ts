import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { ensureIdentityTable, ensureKeyTable, ensureStatsTable, ensureUsageTable, localDynamo, startEmbeddedStore, type EmbeddedStore } from '../../../bin/local/embedded-store.ts';
import { seedRollups, type SeedShape } from '../../../bench/console-seed.ts';
import { consoleCalls } from '../../../bench/console.ts';
import { createAdminDoor } from '../../../lambda/admin/index.ts';
import { mintKey } from '../../../lambda/auth/issue-key.ts';
import { DynamoKeyStore } from '../../../lambda/auth/key-store.ts';
import type { DynamoApi } from '../../../lambda/aws/dynamodb.ts';
import { createRouter, parseRoutingConfig } from '../../../lambda/config/routing.ts';
import { PeopleStore } from '../../../lambda/identity/store/people.ts';
import { IdentityTable } from '../../../lambda/identity/store/table.ts';
import type { RequestState } from '../../../lambda/request-state.ts';
import { UpstreamHealth } from '../../../lambda/upstream/upstream-health.ts';

/**
 * The DynamoDB requests each console call makes (docs/console.md, "Reads per view"), counted
 * on the real stores over dynalite, at two sizes of the same traffic: 4 times the people and
 * keys must not mean more requests for any view but the two lists that page through them.
 */
// Each dimension has at least the explorer's top 8 values in both, so the top's buckets are read in full either way.
const SMALL: SeedShape = { days: 40, requestsPerMonth: 30_000, people: 10, automationKeys: 4, groups: 8, models: 4, upstreams: 2 };
const LARGE: SeedShape = { ...SMALL, people: 40, automationKeys: 16, groups: 32 };

async function measure(shape: SeedShape): Promise<{ reads: Record<string, Record<string, number>>; close: () => Promise<void> }> {
  const embedded: EmbeddedStore = await startEmbeddedStore(undefined);
  const client = localDynamo(embedded.endpoint);
  await ensureKeyTable(client, 'keys');
  await ensureStatsTable(client, 'stats');
  await ensureIdentityTable(client, 'identity');
  await ensureUsageTable(client, 'usage');
  const now = Date.now();
  const { population } = await seedRollups(client, 'stats', shape, new Date(now));
  const keys = new DynamoKeyStore('keys', client);
  for (const key of population.keys) await keys.put(mintKey({ id: key.id, name: key.name, ...(key.owner ? { owner: key.owner } : {}) }).record);
  const people = new PeopleStore(new IdentityTable('identity', client));
  for (const person of population.people) await people.seen({ sub: person.sub, email: person.email, groups: person.groups }, now);
  const admin = mintKey({ name: 'admin', role: 'admin' });
  await keys.put(admin.record);

  let calls: string[] = [];
  const counting: DynamoApi = {
    call: (operation, input) => {
      calls.push(operation);
      return client.call(operation, input);
    },
  };
  const routing = parseRoutingConfig({ upstreams: { anthropic: { type: 'simulator' }, 'bedrock-us': { type: 'simulator' } }, routes: [{ model: '*', upstream: 'anthropic' }], identity: { issuer: 'https://idp.example.com', clientId: 'x', caps: { pools: { 'team-00': { monthly: 100 } } } } });
  // A new door per call: each call counted cold (nothing in its label or pool caches).
  const doorOf = () => createAdminDoor({ keys: new DynamoKeyStore('keys', counting), dynamo: counting, identityTableName: 'identity', statsTableName: 'stats', usageTableName: 'usage', identityConfig: routing.identity, router: createRouter(routing), health: new UpstreamHealth(), originOf: () => 'http://127.0.0.1:1', log: () => {}, keyCacheSeconds: 30 });
  const reads: Record<string, Record<string, number>> = {};
  for (const call of consoleCalls(population, now)) {
    if (call.id === 'page') continue;
    const url = new URL(call.path, 'http://127.0.0.1:1');
    const event = { rawPath: url.pathname, rawQueryString: url.search.slice(1), headers: { authorization: `Bearer ${admin.key}` }, requestContext: { http: { method: 'GET', sourceIp: '127.0.0.1' }, domainName: '127.0.0.1:1' }, isBase64Encoded: false } as unknown as LambdaFunctionURLEvent;
    const door = doorOf();
    calls = [];
    const answer = await door.serve(event, { id: 'req_test', route: { name: 'admin', family: 'responses', maxBodyBytes: 16_384 } } as RequestState);
    expect([call.id, answer.statusCode]).toEqual([call.id, 200]);
    reads[call.id] = calls.reduce<Record<string, number>>((counts, operation) => ({ ...counts, [operation]: (counts[operation] ?? 0) + 1 }), {});
  }
  return { reads, close: () => embedded.close() };
}

/** The documented bound of each call: DynamoDB requests, the caller's key lookup included. */
const BOUNDS: Record<string, number> = {
  session: 1,
  'overview.month': 1 + 1 + 1 + 4 + 5 + 10 + 1,
  'overview.week': 1 + 1 + 1 + 8 + 5 + 10 + 1,
  'overview.day': 1 + 1 + 1 + 4 + 5 + 10 + 1,
  // Key: 1; ranking and all rows: one Query per partition each; n x buckets / 100 BatchGetItems; labels; as-of.
  'usage.all.24h': 1 + 2 + 1,
  'usage.model.7d': 1 + 2 + 2 + 1 + 1,
  'usage.model.7d.hourly': 1 + 8 + 8 + 6 + 1,
  'usage.person.30d': 1 + 2 + 2 + 3 + 8 + 1,
  'usage.key.90d': 1 + 1 + 4 + 8 + 16 + 1,
  // 13 month buckets x the top 8 groups: 104 rows, two BatchGetItems; group labels are their names (no read).
  'usage.group.12mo': 1 + 2 + 2 + 2 + 1,
  'usage.tokens.30d': 1 + 2 + 1,
  'usage.csv': 1 + 2 + 2 + 3 + 1,
  keys: 1 + 1 + 1,
  people: 1 + 1 + 2,
  // Key; the person; their sessions; their day items (spend against their caps).
  person: 1 + 1 + 1 + 1,
  upstreams: 1 + 2 + 1,
  audit: 1 + 1,
};

describe('DynamoDB requests per console call', () => {
  let small: Awaited<ReturnType<typeof measure>>;
  let large: Awaited<ReturnType<typeof measure>>;
  beforeAll(async () => {
    small = await measure(SMALL);
    large = await measure(LARGE);
  }, 120_000);
  afterAll(async () => {
    await small?.close();
    await large?.close();
  });

  test('each call stays within its documented bound, and never scans but the key list', () => {
    if (process.env.PRINT_READS) console.log(JSON.stringify(large.reads, null, 1));
    for (const [id, counts] of Object.entries(large.reads)) {
      const total = Object.values(counts).reduce((sum, count) => sum + count, 0);
      expect([id, total <= (BOUNDS[id] as number)]).toEqual([id, true]);
      if (id !== 'keys') expect([id, counts.Scan ?? 0]).toEqual([id, 0]);
    }
  });

  test('four times the people and keys: the same requests for every view (the usage views read n x buckets rows, not every value)', () => {
    for (const id of Object.keys(small.reads)) expect([id, large.reads[id]]).toEqual([id, small.reads[id]]);
  });
});
