import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import OpenAI from 'openai';
import { IdentityOperations } from '../../../lambda/identity/operators.ts';
import { localDynamo } from '../../../bin/local/embedded-store.ts';
import { periodEnd, periodsStart, usageInPeriods } from '../../../lambda/usage/limits.ts';
import { utcDay } from '../../../lambda/usage/usage-table.ts';
import { logOf } from '../../support/gateway-harness.ts';
import type { TestUser } from '../../support/oidc-idp.ts';
import { signIn } from '../../support/sign-in.ts';
import { ALICE, BOB, startSignInGateway, type SignInSetup } from '../../support/sign-in-gateway.ts';

/**
 * Spend caps per person (docs/sign-in.md, "Spend caps"), through the real gateway signing in
 * against the test IdP, with spend put in the usage table the gateway reads (the real store):
 * each precedence level and period, the headers Claude Code reads, the exact refusal, the usage
 * page's numbers, keys tied to a person, and a counter that cannot be read.
 */
const U = 'anthropic-ratelimit-unified-';
const person = (sub: string, groups: string[]): TestUser => ({ sub, password: `${sub}-password`, email: `${sub}@example.com`, groups });
const CAROL = person('carol', ['interns']);
const DAVE = person('dave', ['engineering']);
const ERIN = person('erin', ['engineering']);
const FRANK = person('frank', ['engineering']);
const GRACE = person('grace', ['engineering']);

let setup: SignInSetup;
let operators: IdentityOperations;
const tokens = new Map<string, string>();

beforeAll(async () => {
  setup = await startSignInGateway({
    idp: { users: [ALICE, BOB, CAROL, DAVE, ERIN, FRANK, GRACE] },
    // Overrides take effect at once here (deployed: within GATEWAY_SESSION_CACHE_SECONDS).
    harness: { settings: { sessionCacheSeconds: 0 } },
    identity: {
      caps: {
        default: { daily: 10, weekly: 30, monthly: 100 },
        groups: { contractors: { daily: 2 }, interns: { daily: 5, monthly: 20 } },
        blockedMessage: 'request an increase at https://go.example.com/limits',
      },
    },
  });
  for (const user of [ALICE, BOB, CAROL, DAVE, ERIN, FRANK, GRACE]) tokens.set(user.sub, (await signIn(setup.gateway.url, user)).access_token as string);
  operators = new IdentityOperations(setup.gateway.storeInfo.identityTable, localDynamo(setup.gateway.storeInfo.endpoint));
});

afterAll(() => setup.close());

/** Spend (micro-dollars) recorded for a person today, as the gateway records it. */
const spend = (sub: string, micro: number) => setup.gateway.usage.add(`person#${sub}`, utcDay(new Date()), 'claude-sonnet-5', { requests: 1, costMicroUsd: micro }, new Date());

async function turn(bearer: string, path = '/first/v1/messages'): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const body = path.startsWith('/second') ? { model: 'claude-sonnet-5', input: 'hi' } : { model: 'claude-sonnet-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
  const response = await fetch(`${setup.gateway.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

const unified = (headers: Headers) => Object.fromEntries([...headers].filter(([name]) => name.startsWith(U) || name === 'retry-after' || name === 'x-should-retry'));
const epoch = (ms: number) => String(Math.floor(ms / 1000));
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

describe('the headers Claude Code reads, for the binding cap', () => {
  test('the default cap: below 75 % allowed; past 75 % and 95 % a warning with the threshold; the reset is the next UTC midnight', async () => {
    const midnight = epoch(periodEnd('day', new Date()));
    await spend('alice', 5_000_000);
    expect(unified((await turn(tokens.get('alice') as string)).headers)).toEqual({
      [`${U}status`]: 'allowed',
      [`${U}reset`]: midnight,
      [`${U}overage-reset`]: midnight,
      [`${U}overage-utilization`]: '0.5',
      [`${U}representative-claim`]: 'overage',
      [`${U}overage-status`]: 'allowed',
    });
    await spend('alice', 3_000_000);
    expect(unified((await turn(tokens.get('alice') as string)).headers)).toMatchObject({ [`${U}status`]: 'allowed_warning', [`${U}overage-status`]: 'allowed_warning', [`${U}overage-surpassed-threshold`]: '0.75', [`${U}overage-utilization`]: '0.8' });
    await spend('alice', 1_600_000);
    expect(unified((await turn(tokens.get('alice') as string)).headers)).toMatchObject({ [`${U}overage-surpassed-threshold`]: '0.95', [`${U}overage-utilization`]: '0.96' });
  });

  test("a group's cap replaces the default (Bob, contractors: $2 a day)", async () => {
    await spend('bob', 1_600_000);
    expect(unified((await turn(tokens.get('bob') as string)).headers)).toMatchObject({ [`${U}overage-utilization`]: '0.8', [`${U}overage-surpassed-threshold`]: '0.75' });
  });

  test("a person's own weekly cap: the reset is next Monday 00:00 UTC", async () => {
    expect(await operators.setCaps('erin', { weekly: 4 }, 'admin@example.com', 'test')).toEqual({ before: {}, after: { weekly: 4 } });
    await spend('erin', 3_200_000);
    const monday = epoch(periodEnd('week', new Date()));
    expect(new Date(Number(monday) * 1000).getUTCDay()).toBe(1);
    expect(unified((await turn(tokens.get('erin') as string)).headers)).toMatchObject({ [`${U}reset`]: monday, [`${U}overage-utilization`]: '0.8' });
  });

  test('a response upstream sends with its own anthropic-ratelimit headers never reaches the client with them (the simulator sends none; see passthrough.test.ts)', async () => {
    const { headers } = await turn(tokens.get('alice') as string);
    expect([...headers.keys()].filter((name) => name.startsWith('anthropic-ratelimit-') && !name.startsWith(U))).toEqual([]);
  });
});

describe('the refusal once a cap is reached', () => {
  test('exactly the protocol shape: 429 billing_error, retry-after, x-should-retry false, no representative claim or overage status, a message with the reset and the next step', async () => {
    await spend('dave', 10_000_000);
    const now = new Date();
    const end = periodEnd('day', now);
    const refused = await turn(tokens.get('dave') as string);
    expect(refused.status).toBe(429);
    const headers = unified(refused.headers);
    const retryAfter = Number(headers['retry-after']);
    expect(Math.abs(retryAfter - Math.ceil((end - now.getTime()) / 1000))).toBeLessThanOrEqual(2);
    expect(headers).toEqual({
      'retry-after': String(retryAfter),
      'x-should-retry': 'false',
      [`${U}status`]: 'rejected',
      [`${U}reset`]: epoch(end),
      [`${U}overage-reset`]: epoch(end),
      [`${U}overage-utilization`]: '1',
      [`${U}overage-surpassed-threshold`]: '1',
      [`${U}overage-period`]: 'daily',
      [`${U}overage-disabled-reason`]: 'org_spend_cap_reached',
    });
    const reset = new Date(end);
    expect(refused.body).toEqual({
      type: 'error',
      error: { type: 'billing_error', message: `Your daily spend limit ($10.00) on this gateway is reached · resets ${MONTHS[reset.getUTCMonth()]} ${reset.getUTCDate()}, 00:00 UTC · request an increase at https://go.example.com/limits` },
      request_id: refused.headers.get('request-id'),
    });
    // Refused before anything went upstream.
    const line = await logOf(setup.gateway, refused.headers.get('request-id'));
    // Not an audit event: the request's own line says who was refused and why.
    expect(line).toMatchObject({ status: 429, sub: 'dave', outcome: 'budget_exhausted' });
    expect(line.upstream).toBeUndefined();
  });

  test('several caps spent: the one resetting last is named (interns: monthly $20 after daily $5)', async () => {
    await spend('carol', 20_000_000);
    const refused = await turn(tokens.get('carol') as string);
    expect(refused.status).toBe(429);
    expect(refused.headers.get(`${U}overage-period`)).toBe('monthly');
    expect(refused.headers.get(`${U}reset`)).toBe(epoch(periodEnd('month', new Date())));
  });

  test("an override lifts a group's cap; removing it puts the group's back; both audited", async () => {
    await operators.setCaps('carol', { daily: 50, monthly: null }, 'admin@example.com', 'test');
    const allowed = await turn(tokens.get('carol') as string);
    expect(allowed.status).toBe(200);
    // $20 of the weekly default $30 (the group sets none); the daily $50 override is less used.
    expect(allowed.headers.get(`${U}reset`)).toBe(epoch(periodEnd('week', new Date())));
    await operators.setCaps('carol', { daily: 'inherit', monthly: 'inherit' }, 'admin@example.com', 'test');
    expect((await turn(tokens.get('carol') as string)).status).toBe(429);
    const audited = (await operators.audit.day(utcDay(new Date()))).filter((event) => event.type === 'person_caps_changed' && event.sub === 'carol');
    expect(audited.map((event) => [event.actor, event.detail])).toEqual([
      ['admin@example.com', 'daily=inherit weekly=inherit monthly=inherit -> daily=50 weekly=inherit monthly=none'],
      ['admin@example.com', 'daily=50 weekly=inherit monthly=none -> daily=inherit weekly=inherit monthly=inherit'],
    ]);
  });

  test('OpenAI format: 429 insufficient_quota with the same message, as the SDK reports it', async () => {
    const client = new OpenAI({ baseURL: `${setup.gateway.url}/second/v1`, apiKey: tokens.get('dave') as string, maxRetries: 0 });
    const error = await client.responses.create({ model: 'claude-sonnet-5', input: 'hi' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('insufficient_quota');
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).message).toContain('daily spend limit ($10.00)');
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers.get('x-should-retry')).toBe('false');
  });
});

describe('keys tied to a person', () => {
  test("a request with the key is charged to the key and to the person; the person's cap refuses the key", async () => {
    const { key, id } = await setup.gateway.issueKey({ owner: 'grace' });
    expect((await turn(key)).status).toBe(200);
    await setup.gateway.recorder.flush();
    const from = periodsStart(new Date());
    const [keyDays, personDays] = await Promise.all([setup.gateway.usage.days(id, from), setup.gateway.usage.days('person#grace', from)]);
    expect(keyDays.map((day) => day.costMicroUsd)).toEqual([expect.any(Number)]);
    expect(keyDays[0]?.costMicroUsd).toBeGreaterThan(0);
    expect(personDays.map((day) => [day.model, day.requests, day.costMicroUsd])).toEqual(keyDays.map((day) => [day.model, day.requests, day.costMicroUsd]));
    const { key: daveKey } = await setup.gateway.issueKey({ owner: 'dave' });
    const refused = await turn(daveKey);
    expect([refused.status, (refused.body.error as Record<string, unknown>).type]).toEqual([429, 'billing_error']);
  });
});

describe('GET /first/api/oauth/usage', () => {
  const usage = async (bearer: string) => {
    const response = await fetch(`${setup.gateway.url}/first/api/oauth/usage`, { headers: { authorization: `Bearer ${bearer}` } });
    return { status: response.status, cacheControl: response.headers.get('cache-control'), body: (await response.json()) as Record<string, unknown> };
  };

  test("dollars of the cap the headers describe, one row per cap, the numbers the usage table holds, resets_at equal to the header's reset", async () => {
    const headers = (await turn(tokens.get('alice') as string)).headers;
    await setup.gateway.recorder.flush();
    const now = new Date();
    const use = usageInPeriods(await setup.gateway.usage.days('person#alice', periodsStart(now)), now);
    const answer = await usage(tokens.get('alice') as string);
    expect(answer.status).toBe(200);
    expect(answer.cacheControl).toBe('no-store');
    const dayPercent = Math.min(99, Math.round(Math.round((use.day.costMicroUsd / 10_000_000) * 100)));
    expect(answer.body).toEqual({
      extra_usage: { is_enabled: true, monthly_limit: 1000, used_credits: Math.floor(use.day.costMicroUsd / 10_000), utilization: dayPercent, currency: 'USD' },
      limits: [
        { kind: 'spend', group: 'daily', percent: dayPercent, resets_at: new Date(periodEnd('day', now)).toISOString(), severity: 'critical', is_active: true },
        { kind: 'spend', group: 'weekly', percent: Math.round((use.week.costMicroUsd / 30_000_000) * 100), resets_at: new Date(periodEnd('week', now)).toISOString(), severity: 'normal', is_active: false },
        { kind: 'spend', group: 'monthly', percent: Math.round((use.month.costMicroUsd / 100_000_000) * 100), resets_at: new Date(periodEnd('month', now)).toISOString(), severity: 'normal', is_active: false },
      ],
    });
    expect(Date.parse((answer.body.limits as { resets_at: string }[])[0]?.resets_at as string) / 1000).toBe(Number(headers.get(`${U}overage-reset`)));
  });

  test('a person without caps: limits [] and the spend of this day, week and month in cents, limits null', async () => {
    await operators.setCaps('frank', { daily: null, weekly: null, monthly: null }, 'admin@example.com', 'test');
    await spend('frank', 12_345_678);
    const { headers } = await turn(tokens.get('frank') as string);
    // No cap: none of the headers.
    expect(Object.keys(unified(headers))).toEqual([]);
    await setup.gateway.recorder.flush();
    const now = new Date();
    const use = usageInPeriods(await setup.gateway.usage.days('person#frank', periodsStart(now)), now);
    expect(use.day.costMicroUsd).toBeGreaterThan(12_345_678);
    expect((await usage(tokens.get('frank') as string)).body).toEqual({
      extra_usage: {
        is_enabled: true,
        monthly_limit: null,
        used_credits: Math.floor(use.month.costMicroUsd / 10_000),
        utilization: null,
        currency: 'USD',
        daily: { limit: null, used_credits: Math.floor(use.day.costMicroUsd / 10_000), utilization: null },
        weekly: { limit: null, used_credits: Math.floor(use.week.costMicroUsd / 10_000), utilization: null },
      },
      limits: [],
    });
  });

  test('a spent cap shows over 100 % once over; no bearer is a 401', async () => {
    await spend('bob', 1_000_000);
    const body = (await usage(tokens.get('bob') as string)).body as { extra_usage: { utilization: number }; limits: { severity: string; percent: number }[] };
    expect(body.extra_usage.utilization).toBeGreaterThanOrEqual(130);
    expect(body.limits[0]).toMatchObject({ severity: 'critical' });
    expect((await fetch(`${setup.gateway.url}/first/api/oauth/usage`)).status).toBe(401);
  });
});

describe('a counter that cannot be read', () => {
  test('fails closed: 429 with x-should-retry false, overage-disabled-reason fetch_error and a message, nothing else; OpenAI clients get a 503', async () => {
    const other = await startSignInGateway({ identity: { caps: { default: { daily: 10 } } } });
    try {
      const token = (await signIn(other.gateway.url, ALICE)).access_token as string;
      expect((await fetch(`${other.gateway.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }) })).status).toBe(200);
      // The usage table gone (a store the gateway cannot read): the real SDK against the embedded store.
      const sdk = new DynamoDBClient({ endpoint: other.gateway.storeInfo.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
      await sdk.send(new DeleteTableCommand({ TableName: other.gateway.storeInfo.usageTable }));
      sdk.destroy();
      const refused = await fetch(`${other.gateway.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }) });
      expect(refused.status).toBe(429);
      expect(unified(refused.headers)).toEqual({ 'x-should-retry': 'false', [`${U}overage-disabled-reason`]: 'fetch_error' });
      expect(((await refused.json()) as { error: unknown }).error).toEqual({ type: 'billing_error', message: expect.stringContaining('could not be checked') });
      const openai = await fetch(`${other.gateway.url}/second/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude-sonnet-5', input: 'hi' }) });
      expect(openai.status).toBe(503);
      expect(((await openai.json()) as { error: { code: string } }).error.code).toBe('spend_check_unavailable');
    } finally {
      await other.close().catch(() => undefined);
    }
  });
});
