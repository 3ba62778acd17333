import type { TestUser } from '../../support/oidc-idp.ts';
import { periodEnd } from '../../../lambda/usage/limits.ts';
import { signIn } from '../../support/sign-in.ts';
import { ALICE, startSignInGateway, type SignInSetup } from '../../support/sign-in-gateway.ts';

/**
 * Group pools (a monthly budget a whole group shares), through the real gateway, IdP and stats
 * table: the group's spend is what its members' requests put in the group rollups (written here
 * by the gateway's own recorder, as npm start writes them), and once it reaches the pool every
 * member is refused with the monthly shape plus `overage-scope: group_pool`.
 */
const U = 'anthropic-ratelimit-unified-';
const member = (sub: string): TestUser => ({ sub, password: `${sub}-password`, email: `${sub}@example.com`, groups: ['ml', 'engineering'] });
const MIA = member('mia');
const MAX = member('max');

let setup: SignInSetup;
const tokens = new Map<string, string>();

beforeAll(async () => {
  setup = await startSignInGateway({
    idp: { users: [ALICE, MIA, MAX] },
    // npm start's way: usage added up in memory and written, rollups included, at each flush.
    harness: { settings: { usageFlushMs: 60_000 }, poolCacheMs: 1 },
    identity: { caps: { pools: { ml: { monthly: 1 } } } },
  });
  for (const user of [ALICE, MIA, MAX]) tokens.set(user.sub, (await signIn(setup.gateway.url, user)).access_token as string);
});

afterAll(() => setup.close());

/** A request of Mia's costing `micro`, as the gateway records one (her account, her groups' rollups). */
async function miaSpends(micro: number): Promise<void> {
  const at = new Date();
  await setup.gateway.recorder.record({ requestId: `req_seed_${micro}_${at.getTime()}`, at, personSub: 'mia', groups: MIA.groups, model: 'claude-sonnet-5', modelDimension: 'claude-sonnet-5', upstream: 'sim', status: 200, costMicroUsd: micro });
  await setup.gateway.recorder.flush();
}

async function turn(sub: string) {
  const response = await fetch(`${setup.gateway.url}/first/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokens.get(sub) as string}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

test('below the pool: members are served, and the pool is not described (the headers are about their own caps)', async () => {
  await miaSpends(800_000);
  const served = await turn('max');
  expect(served.status).toBe(200);
  expect([...served.headers.keys()].filter((name) => name.startsWith(U))).toEqual([]);
});

test('the pool used up: every member refused with the monthly shape and overage-scope group_pool; others served', async () => {
  await miaSpends(200_000);
  const end = periodEnd('month', new Date());
  const refused = await turn('max');
  expect(refused.status).toBe(429);
  const headers = Object.fromEntries([...refused.headers].filter(([name]) => name.startsWith(U) || name === 'retry-after' || name === 'x-should-retry'));
  expect(headers).toEqual({
    'retry-after': expect.stringMatching(/^\d+$/),
    'x-should-retry': 'false',
    [`${U}status`]: 'rejected',
    [`${U}reset`]: String(end / 1000),
    [`${U}overage-reset`]: String(end / 1000),
    [`${U}overage-utilization`]: expect.stringMatching(/^1(\.\d+)?$/),
    [`${U}overage-surpassed-threshold`]: '1',
    [`${U}overage-period`]: 'monthly',
    [`${U}overage-scope`]: 'group_pool',
    [`${U}overage-disabled-reason`]: 'org_spend_cap_reached',
  });
  expect((refused.body.error as { type: string; message: string }).type).toBe('billing_error');
  expect((refused.body.error as { message: string }).message).toMatch(/^Your group's shared budget is used up \(ml: \$1\.00 a month\) · resets [A-Z][a-z]{2} 1, 00:00 UTC · ask your gateway admin to raise it$/);
  expect((await turn('mia')).status).toBe(429);
  expect((await turn('alice')).status).toBe(200);

  const usage = await fetch(`${setup.gateway.url}/first/api/oauth/usage`, { headers: { authorization: `Bearer ${tokens.get('max') as string}` } });
  expect(await usage.json()).toMatchObject({
    extra_usage: { monthly_limit: 100, utilization: expect.any(Number) },
    limits: [{ kind: 'spend', group: 'monthly', resets_at: new Date(end).toISOString(), severity: 'critical', is_active: true }],
  });
});
