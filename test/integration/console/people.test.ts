import { adminCall, consoleSignInWithIdp } from '../../support/console.ts';
import type { TestUser } from '../../support/oidc-idp.ts';
import { ScriptedBrowser, signIn } from '../../support/sign-in.ts';
import { ALICE, startSignInGateway, type SignInSetup } from '../../support/sign-in-gateway.ts';

/**
 * The console with an identity provider (the real oidc-provider): members of adminGroups sign in
 * as admins, of viewerGroups as viewers, anyone else is refused; the shared /oauth/callback round
 * trip; people and their sessions; an admin ends a person's access, their console session too.
 */
const ADA: TestUser = { sub: 'ada', password: 'ada-password', email: 'ada@example.com', name: 'Ada Admin', groups: ['gateway-admins', 'engineering'] };
const VIV: TestUser = { sub: 'viv', password: 'viv-password', email: 'viv@example.com', groups: ['gateway-viewers'] };

describe('console sign-in with an identity provider', () => {
  let setup: SignInSetup;
  beforeAll(async () => {
    setup = await startSignInGateway({ identity: { adminGroups: ['gateway-admins'], viewerGroups: ['gateway-viewers'] }, idp: { users: [ALICE, ADA, VIV] } });
  });
  afterAll(() => setup.close());
  const url = () => setup.gateway.url;

  test('an admin-group member signs in as admin through /oauth/callback; the cookie works, the sign-in is audited', async () => {
    const { page, session } = await consoleSignInWithIdp(new ScriptedBrowser(), url(), ADA);
    expect(page.url).toBe(`${url()}/admin`);
    expect(session).toBeDefined();
    const me = await adminCall(url(), 'GET', '/session', { session });
    expect(me.body).toMatchObject({ role: 'admin', via: 'session', actor: { label: 'ada@example.com', sub: 'ada', email: 'ada@example.com', name: 'Ada Admin' }, features: { signIn: true } });
    const made = await adminCall(url(), 'POST', '/keys', { session, body: { name: 'ada-made', owner: 'ada@example.com' } });
    expect(made).toMatchObject({ status: 201, body: { owner: 'ada' } });
    const audit = ((await adminCall(url(), 'GET', '/audit', { session })).body as { events: Record<string, string>[] }).events;
    expect(audit).toContainEqual(expect.objectContaining({ type: 'sign_in', sub: 'ada', surface: 'console', role: 'admin', via: '/oauth/callback', ip: '127.0.0.1' }));
    expect(audit).toContainEqual(expect.objectContaining({ type: 'key_created', actor: 'ada@example.com', detail: expect.stringContaining('owner=ada') }));
  });

  test('a viewer-group member signs in as viewer and may not change anything', async () => {
    const { session } = await consoleSignInWithIdp(new ScriptedBrowser(), url(), VIV);
    expect((await adminCall(url(), 'GET', '/session', { session })).body).toMatchObject({ role: 'viewer' });
    expect((await adminCall(url(), 'GET', '/people', { session })).status).toBe(200);
    expect((await adminCall(url(), 'POST', '/keys', { session, body: { name: 'nope' } })).status).toBe(403);
  });

  test('someone in neither group is refused at the callback, with no session, and it is audited', async () => {
    const browser = new ScriptedBrowser();
    const { page, session } = await consoleSignInWithIdp(browser, url(), ALICE);
    expect(page.status).toBe(403);
    expect(page.text).toContain('Not a console user');
    expect(session).toBeUndefined();
    const { session: admin } = await consoleSignInWithIdp(new ScriptedBrowser(), url(), ADA);
    const audit = ((await adminCall(url(), 'GET', '/audit', { session: admin })).body as { events: Record<string, string>[] }).events;
    expect(audit).toContainEqual(expect.objectContaining({ type: 'sign_in_refused', sub: 'alice', reason: 'not_in_console_groups', surface: 'console' }));
  });

  test('people: who signed in, their groups and sessions; revoking a person ends their console session and their keys', async () => {
    const { session: admin } = await consoleSignInWithIdp(new ScriptedBrowser(), url(), ADA);
    const { session: viewer } = await consoleSignInWithIdp(new ScriptedBrowser(), url(), VIV);
    const people = (await adminCall(url(), 'GET', '/people', { session: admin })).body as { people: { sub: string; groups: string[]; email: string }[] };
    expect(people.people).toContainEqual(expect.objectContaining({ sub: 'viv', email: 'viv@example.com', groups: ['gateway-viewers'], spendMicroUsd: { day: 0, week: 0, month: 0 } }));
    const detail = (await adminCall(url(), 'GET', '/people/viv', { session: admin })).body as { sessions: { surface: string; revokedAt: string | null }[] };
    expect(detail.sessions.filter((entry) => entry.surface === 'console' && entry.revokedAt === null).length).toBeGreaterThanOrEqual(1);

    const revoked = await adminCall(url(), 'POST', '/people/viv/revoke', { session: admin });
    expect(revoked.status).toBe(200);
    expect((revoked.body as { sessionsEnded: string[] }).sessionsEnded.length).toBeGreaterThanOrEqual(1);
    expect((await adminCall(url(), 'GET', '/session', { session: viewer })).status).toBe(401);
    expect((await adminCall(url(), 'GET', '/people/nobody-here', { session: admin })).status).toBe(404);
    // A subject with characters a path must escape.
    expect((await adminCall(url(), 'GET', `/people/${encodeURIComponent('auth0|x/y')}`, { session: admin })).status).toBe(404);
  });

  test('a signed-in admin\'s access token is an admin API credential; a person outside the console groups gets 403', async () => {
    const ada = await signIn(url(), ADA);
    expect((await adminCall(url(), 'GET', '/keys', { bearer: ada.access_token as string })).status).toBe(200);
    expect((await adminCall(url(), 'POST', '/keys', { bearer: ada.access_token as string, body: { name: 'by-token' } })).status).toBe(201);
    const alice = await signIn(url(), ALICE);
    const refused = await adminCall(url(), 'GET', '/keys', { bearer: alice.access_token as string });
    expect([refused.status, (refused.body as { error: { code: string } }).error.code]).toEqual([403, 'role_required']);
  });

  test('starting sign-ins is limited per address (30 per 10 minutes)', async () => {
    let status = 0;
    for (let i = 0; i < 40 && status !== 429; i++) {
      const answer = await fetch(`${url()}/admin/login`, { redirect: 'manual' });
      await answer.arrayBuffer();
      status = answer.status;
    }
    expect(status).toBe(429);
  });
});
