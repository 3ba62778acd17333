import { messagesWith, startSignInGateway, ALICE, BOB, type SignInSetup } from '../../support/sign-in-gateway.ts';
import { approveInBrowser, refresh, ScriptedBrowser, signIn, startDeviceFlow } from '../../support/sign-in.ts';

/**
 * The refresh grant: rotation, reuse detection, and the IdP re-checked at every refresh (the
 * protocol's deprovisioning hook: `401 invalid_grant`).
 */
describe('refresh', () => {
  let setup: SignInSetup;
  afterEach(() => setup?.close());

  const auditTypes = () => setup.gateway.logs.filter((line) => line.msg === 'audit').map((line) => `${line.type}${line.reason ? `:${line.reason}` : ''}`);

  test('rotates: a new pair each time, the IdP asked each time, both tokens work', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const first = await signIn(url, ALICE);
    const idpTokenCalls = setup.idp.calls.get('token') ?? 0;
    const second = await refresh(url, first.refresh_token as string);
    expect(second.status).toBe(200);
    expect(second.headers.get('cache-control')).toBe('no-store');
    expect(second.body).toEqual({ access_token: expect.stringMatching(/^gwt_/), token_type: 'Bearer', expires_in: 3600, refresh_token: expect.stringMatching(/^gwr_/) });
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect(setup.idp.calls.get('token')).toBe(idpTokenCalls + 1);
    const third = await refresh(url, second.body.refresh_token as string);
    expect(third.status).toBe(200);
    expect((await messagesWith(url, third.body.access_token as string)).status).toBe(200);
    // The earlier access tokens live on until they expire (a refresh does not end the session).
    expect((await messagesWith(url, first.access_token as string)).status).toBe(200);
  });

  test('a refresh token used again later revokes its whole session: every token of it stops at once', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const first = await signIn(url, ALICE);
    const second = await refresh(url, first.refresh_token as string);
    expect(second.status).toBe(200);
    setup.advance(31_000);
    const replay = await refresh(url, first.refresh_token as string);
    expect(replay).toMatchObject({ status: 401, body: { error: 'invalid_grant' } });
    expect(await refresh(url, second.body.refresh_token as string)).toMatchObject({ status: 401, body: { error: 'invalid_grant' } });
    for (const token of [first.access_token, second.body.access_token]) {
      const answer = await messagesWith(url, token as string);
      expect(answer.status).toBe(401);
      expect(answer.headers.get('x-should-retry')).toBe('false');
      expect(JSON.parse(answer.body).error.type).toBe('authentication_error');
    }
    expect(auditTypes()).toEqual(expect.arrayContaining(['refresh_reuse', 'session_revoked:refresh_reuse', 'refresh_failed:session_revoked']));
  });

  test('two processes refreshing with the same token at once both get working tokens (no false reuse alarm)', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const first = await signIn(url, ALICE);
    const answers = await Promise.all([refresh(url, first.refresh_token as string), refresh(url, first.refresh_token as string), refresh(url, first.refresh_token as string)]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    // One of them asked the IdP; the others shared its result.
    expect(new Set(answers.map((answer) => answer.body.refresh_token)).size).toBe(3);
    for (const answer of answers) {
      expect((await messagesWith(url, answer.body.access_token as string)).status).toBe(200);
      expect((await refresh(url, answer.body.refresh_token as string)).status).toBe(200);
    }
    expect(auditTypes()).not.toContain('refresh_reuse');
  });

  test('a person removed at the IdP gets invalid_grant at the next refresh, and their session ends at once', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const tokens = await signIn(url, ALICE);
    expect((await messagesWith(url, tokens.access_token as string)).status).toBe(200);
    setup.idp.removeUser(ALICE.sub);
    expect(await refresh(url, tokens.refresh_token as string)).toMatchObject({ status: 401, body: { error: 'invalid_grant' } });
    const after = await messagesWith(url, tokens.access_token as string);
    expect(after.status).toBe(401);
    expect(after.headers.get('x-should-retry')).toBe('false');
    expect(auditTypes()).toEqual(expect.arrayContaining(['session_revoked:idp_refused', 'refresh_failed:idp_refused']));
    // Signing in again is refused by the IdP itself (its login form rejects the removed user).
    const device = await startDeviceFlow(url);
    expect((await approveInBrowser(new ScriptedBrowser(), url, device.user_code, ALICE)).text).toContain('Wrong user name or password');
  });

  test('a person disabled at the IdP is refused the same way', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const tokens = await signIn(url, BOB);
    setup.idp.setDisabled(BOB.sub, true);
    expect(await refresh(url, tokens.refresh_token as string)).toMatchObject({ status: 401, body: { error: 'invalid_grant' } });
  });

  test('groups follow the IdP: a refresh updates them, and a person no longer in an allowed group is signed out', async () => {
    setup = await startSignInGateway({ identity: { allowedGroups: ['engineering', 'ml'] } });
    const url = setup.gateway.url;
    const door = setup.gateway.identity!;
    const tokens = await signIn(url, ALICE);
    expect((await door.principal(tokens.access_token as string))?.person).toMatchObject({ sub: ALICE.sub, email: ALICE.email, name: ALICE.name, groups: ['engineering'] });
    setup.idp.setGroups(ALICE.sub, ['engineering', 'ml']);
    const refreshed = await refresh(url, tokens.refresh_token as string);
    expect(refreshed.status).toBe(200);
    expect((await door.principal(refreshed.body.access_token as string))?.person?.groups).toEqual(['engineering', 'ml']);
    expect((await door.person(ALICE.sub))?.groups).toEqual(['engineering', 'ml']);
    setup.idp.setGroups(ALICE.sub, ['sales']);
    expect(await refresh(url, refreshed.body.refresh_token as string)).toMatchObject({ status: 401, body: { error: 'invalid_grant' } });
    expect((await messagesWith(url, refreshed.body.access_token as string)).status).toBe(401);
    expect(auditTypes()).toContain('refresh_failed:not_in_allowed_groups');
  });

  test('an IdP outage is a 503 the client retries, and the same refresh token works once the IdP is back', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const tokens = await signIn(url, ALICE);
    setup.idp.setDown(true);
    const unavailable = await refresh(url, tokens.refresh_token as string);
    expect(unavailable).toMatchObject({ status: 503, body: { error: 'temporarily_unavailable' } });
    expect(unavailable.headers.get('retry-after')).toBe('30');
    // The session itself is untouched.
    expect((await messagesWith(url, tokens.access_token as string)).status).toBe(200);
    expect(auditTypes()).toContain('refresh_failed:idp_unavailable');
    setup.idp.setDown(false);
    // Long after the failed try: no reuse alarm, the claim was given back.
    setup.advance(60_000);
    expect((await refresh(url, tokens.refresh_token as string)).status).toBe(200);
  });

  test('an IdP that does not answer at all (connection refused) is the same 503', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const tokens = await signIn(url, ALICE);
    await setup.idp.close();
    expect(await refresh(url, tokens.refresh_token as string)).toMatchObject({ status: 503, body: { error: 'temporarily_unavailable' } });
  });

  test('unknown, garbled and missing refresh tokens', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    expect(await refresh(url, `gwr_${'A'.repeat(43)}`)).toMatchObject({ status: 401, body: { error: 'invalid_grant' } });
    expect(await refresh(url, 'not-ours')).toMatchObject({ status: 401, body: { error: 'invalid_grant' } });
    const missing = await fetch(`${url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=refresh_token' });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: 'invalid_request' });
  });

  test('without an IdP refresh token there is no refresh token: the session ends with its access token', async () => {
    // No offline_access: the IdP issues no refresh token, so the gateway cannot re-check the person later.
    setup = await startSignInGateway({ identity: { scopes: ['openid', 'email', 'profile'], authorizationParams: {} } });
    const url = setup.gateway.url;
    const tokens = await signIn(url, ALICE);
    expect(tokens).not.toHaveProperty('refresh_token');
    expect(tokens.expires_in).toBe(3600);
    expect((await messagesWith(url, tokens.access_token as string)).status).toBe(200);
    setup.advance(3_601_000);
    const expired = await messagesWith(url, tokens.access_token as string);
    expect(expired.status).toBe(401);
    expect(expired.headers.get('x-should-retry')).toBe('false');
  });
});
