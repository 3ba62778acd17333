import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { adminCall, consoleSignInWithIdp, signInWithLink, type ConsoleSession } from '../../support/console.ts';
import type { TestUser } from '../../support/oidc-idp.ts';
import { runKeys, tempDir } from '../../support/processes.ts';
import { ScriptedBrowser, signIn } from '../../support/sign-in.ts';
import { ALICE, messagesWith, startSignInGateway, type SignInSetup } from '../../support/sign-in-gateway.ts';
import { utcDay } from '../../../lambda/usage/usage-table.ts';

/**
 * A person's effective policy and own caps through the admin API (GET and PATCH
 * /admin/api/people/{sub}), against the key CLI's `people show` and `people set-caps` on the same
 * tables: the same summary, the same change, the same audit event; every refusal; and the
 * request path holding the person to the cap an admin set.
 */
const ADA: TestUser = { sub: 'ada', password: 'ada-password', email: 'ada@example.com', groups: ['gateway-admins'] };
const CAPS = { default: { daily: 10, weekly: 30 }, groups: { interns: { daily: 5 } } };
const INTERN: TestUser = { sub: 'ian', password: 'ian-password', email: 'ian@example.com', groups: ['interns'] };

let setup: SignInSetup;
let admin: ConsoleSession;
let internToken: string;
const configFile = join(tempDir('gateway-person-caps-'), 'gateway.json');
const url = () => setup.gateway.url;

beforeAll(async () => {
  setup = await startSignInGateway({
    idp: { users: [ALICE, ADA, INTERN] },
    // Own caps apply at once here (deployed: within GATEWAY_SESSION_CACHE_SECONDS).
    harness: { settings: { sessionCacheSeconds: 0 } },
    identity: { adminGroups: ['gateway-admins'], policies: [{ groups: ['interns'], models: ['claude-*'] }], caps: CAPS },
  });
  writeFileSync(configFile, JSON.stringify({ upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }], identity: { issuer: setup.idp.issuer, clientId: setup.idp.clientId, policies: [{ groups: ['interns'], models: ['claude-*'] }], caps: CAPS } }));
  admin = await signInWithLink(setup.gateway);
  internToken = (await signIn(url(), INTERN)).access_token as string;
});
afterAll(() => setup.close());

/** The key CLI on the harness's tables, as on a deployed stack's. */
async function cli(args: string[]): Promise<unknown> {
  const { storeInfo } = setup.gateway;
  const run = await runKeys([...args, '--json', '--table', storeInfo.keyTable, '--usage-table', storeInfo.usageTable, '--identity-table', storeInfo.identityTable, '--region', 'us-east-1', '--config', configFile], { AWS_ENDPOINT_URL: storeInfo.endpoint, AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' });
  if (run.code !== 0) throw new Error(`keys ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}
const patch = (body: unknown, options: Parameters<typeof adminCall>[3] = { session: admin }) => adminCall(url(), 'PATCH', '/people/ian', { ...options, body });
const policy = async () => ((await adminCall(url(), 'GET', '/people/ian', { session: admin })).body as { policy: { caps: { period: string; limitUsd: number | null; source: Record<string, string>; spentUsd: number }[] } }).policy;
const error = (answer: { status: number; body: unknown }) => [answer.status, (answer.body as { error: { code: string } }).error.code];

test("a person's page gives their effective models and caps, each with its source and spend, exactly as `people show` does", async () => {
  await setup.gateway.usage.add('person#ian', utcDay(new Date()), 'claude-sonnet-5', { requests: 1, costMicroUsd: 1_250_000 }, new Date());
  const shown = await policy();
  expect(shown).toMatchObject({ sub: 'ian', groups: ['interns'], models: ['claude-*'], spendKnown: true });
  expect(shown.caps.map(({ period, limitUsd, source, spentUsd }) => [period, limitUsd, source, spentUsd])).toEqual([
    ['day', 5, { from: 'group', group: 'interns' }, 1.25],
    ['week', 30, { from: 'default' }, 1.25],
    ['month', null, { from: 'none' }, 1.25],
  ]);
  expect(await cli(['people', 'show', 'ian'])).toEqual(shown);
});

test('an admin sets own caps (dollars, none, inherit) as `people set-caps` does: the same values, the same audit event, the same summary', async () => {
  const set = await patch({ daily: 0.75, monthly: null });
  expect(set.status).toBe(200);
  expect(set.body).toMatchObject({ sub: 'ian', email: 'ian@example.com', before: {}, after: { daily: 0.75, monthly: null } });
  const caps = (set.body as { policy: { caps: { limitUsd: number | null; source: Record<string, string> }[] } }).policy.caps;
  expect(caps.map(({ limitUsd, source }) => [limitUsd, source.from])).toEqual([[0.75, 'person'], [30, 'default'], [null, 'person']]);
  expect((set.body as { policy: unknown }).policy).toEqual(await policy());
  expect(await cli(['people', 'show', 'ian'])).toEqual(await policy());

  // The CLI's change on top of the console's reads back the same through the API.
  expect(await cli(['people', 'set-caps', 'ian', '--daily', 'inherit', '--weekly', '12.5'])).toEqual({ sub: 'ian', email: 'ian@example.com', before: { daily: 0.75, monthly: null }, after: { weekly: 12.5, monthly: null } });
  expect((await policy()).caps.map(({ limitUsd, source }) => [limitUsd, source.from])).toEqual([[5, 'group'], [12.5, 'person'], [null, 'person']]);
  const back = await patch({ weekly: 'inherit', monthly: 'inherit' });
  expect(back.body).toMatchObject({ before: { weekly: 12.5, monthly: null }, after: {} });

  const events = ((await adminCall(url(), 'GET', '/audit', { session: admin })).body as { events: Record<string, string>[] }).events.filter((event) => event.type === 'person_caps_changed');
  expect(events.map(({ sub, email, actor, via, detail }) => ({ sub, email, actor, via, detail })).reverse()).toEqual([
    { sub: 'ian', email: 'ian@example.com', actor: 'one-time link', via: 'console', detail: 'daily=inherit weekly=inherit monthly=inherit -> daily=0.75 weekly=inherit monthly=none' },
    { sub: 'ian', email: 'ian@example.com', actor: 'operator', via: 'keys people set-caps', detail: 'daily=0.75 weekly=inherit monthly=none -> daily=inherit weekly=12.5 monthly=none' },
    { sub: 'ian', email: 'ian@example.com', actor: 'one-time link', via: 'console', detail: 'daily=inherit weekly=12.5 monthly=none -> daily=inherit weekly=inherit monthly=inherit' },
  ]);
  expect(events.filter((event) => event.via === 'console').every((event) => event.ip === '127.0.0.1')).toBe(true);
});

test('the request path holds the person to the cap an admin set: over it, the billing_error 429', async () => {
  expect((await messagesWith(url(), internToken)).status).toBe(200);
  expect((await patch({ daily: 1 })).status).toBe(200);
  const refused = await messagesWith(url(), internToken);
  expect(refused.status).toBe(429);
  expect(JSON.parse(refused.body)).toMatchObject({ type: 'error', error: { type: 'billing_error' } });
  expect((await patch({ daily: 'inherit' })).status).toBe(200);
  expect((await messagesWith(url(), internToken)).status).toBe(200);
});

test('refusals: bad values 400 naming the field, nothing changed; unknown person 404; viewer, missing CSRF and other origins 403; no credential 401; big bodies 413', async () => {
  const before = await policy();
  for (const [body, param] of [
    [{ daily: -1 }, 'daily'],
    [{ daily: '5' }, 'daily'],
    [{ daily: 'none' }, 'daily'],
    [{ weekly: 0.0000001 }, 'weekly'],
    [{ monthly: 2e9 }, 'monthly'],
    [{ yearly: 5 }, undefined],
    [{}, undefined],
  ] as const) {
    const answer = await patch(body);
    expect([answer.status, body]).toEqual([400, body]);
    expect((answer.body as { error: Record<string, string> }).error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', ...(param ? { param } : {}) });
  }
  const notJson = await adminCall(url(), 'PATCH', '/people/ian', { session: admin, body: undefined, headers: { 'content-type': 'application/json' } });
  expect(notJson.status).toBe(400);
  expect(await policy()).toEqual(before);

  expect(error(await adminCall(url(), 'PATCH', '/people/nobody', { session: admin, body: { daily: 1 } }))).toEqual([404, 'not_found']);
  const viewer = await signInWithLink(setup.gateway, 'viewer');
  expect(error(await patch({ daily: 1 }, { session: viewer }))).toEqual([403, 'admin_role_required']);
  expect(error(await patch({ daily: 1 }, { session: admin, headers: { 'x-csrf-token': '' } }))).toEqual([403, 'csrf_failed']);
  expect(error(await patch({ daily: 1 }, { session: admin, headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' } }))).toEqual([403, 'csrf_failed']);
  expect(error(await adminCall(url(), 'PATCH', '/people/ian', { body: { daily: 1 } }))).toEqual([401, 'not_signed_in']);
  const big = await adminCall(url(), 'PATCH', '/people/ian', { session: admin, body: { daily: 1, pad: 'x'.repeat(17 * 1024) } });
  expect(big.status).toBe(413);
  expect(await policy()).toEqual(before);
});

test("a signed-in admin's token changes caps through the API (audited as the admin API); a person outside the console groups is refused", async () => {
  const { session: ada } = await consoleSignInWithIdp(new ScriptedBrowser(), url(), ADA);
  expect((await patch({ weekly: 20 }, { session: ada as ConsoleSession })).status).toBe(200);
  const token = (await signIn(url(), ADA)).access_token as string;
  expect((await patch({ weekly: 'inherit' }, { bearer: token })).status).toBe(200);
  const events = ((await adminCall(url(), 'GET', '/audit', { session: admin })).body as { events: Record<string, string>[] }).events;
  expect(events).toContainEqual(expect.objectContaining({ type: 'person_caps_changed', actor: 'ada@example.com', via: 'admin API', detail: expect.stringContaining('weekly=20 monthly=inherit -> ') }));
  const alice = (await signIn(url(), ALICE)).access_token as string;
  expect(error(await patch({ weekly: 1 }, { bearer: alice }))).toEqual([403, 'role_required']);
});
