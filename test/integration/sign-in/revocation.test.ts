import { startGateway } from '../../support/gateway-harness.ts';
import { messagesWith, startSignInGateway, ALICE, type SignInSetup } from '../../support/sign-in-gateway.ts';
import { refresh, revoke, signIn } from '../../support/sign-in.ts';

/** RFC 7009 revocation as Claude Code's /logout uses it, and what a revoked bearer gets. */
describe('revocation', () => {
  let setup: SignInSetup;
  afterEach(() => setup?.close());

  test('/logout: the access token, then the refresh token; the next request is 401 with x-should-retry: false at once', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const tokens = await signIn(url, ALICE);
    expect((await messagesWith(url, tokens.access_token as string)).status).toBe(200);
    expect(await revoke(url, tokens.access_token as string)).toBe(200);
    expect(await revoke(url, tokens.refresh_token as string, 'refresh_token')).toBe(200);
    const refused = await messagesWith(url, tokens.access_token as string);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('x-should-retry')).toBe('false');
    expect(JSON.parse(refused.body)).toMatchObject({ type: 'error', error: { type: 'authentication_error', message: expect.stringContaining('sign in again') } });
    // Claude Code's other bearer paths refuse it the same way: settings, usage, telemetry.
    for (const [method, path] of [['GET', '/first/managed/settings'], ['GET', '/first/api/oauth/usage'], ['POST', '/first/v1/metrics'], ['GET', '/second/v1/models?client_version=0.171.0']]) {
      const other = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${tokens.access_token as string}`, 'content-type': 'application/json' }, ...(method === 'POST' ? { body: '{}' } : {}) });
      expect([path, other.status, other.headers.get('x-should-retry')]).toEqual([path, 401, 'false']);
    }
    expect(await refresh(url, tokens.refresh_token as string)).toMatchObject({ status: 401, body: { error: 'invalid_grant' } });
    const audit = setup.gateway.logs.filter((line) => line.msg === 'audit' && line.type === 'session_revoked');
    expect(audit).toEqual([expect.objectContaining({ sub: ALICE.sub, reason: 'sign_out', via: '/oauth/revoke', session: expect.stringMatching(/^ses_/) })]);
  });

  test('revoking the refresh token alone ends the access token too (one session)', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const tokens = await signIn(url, ALICE);
    expect(await revoke(url, tokens.refresh_token as string, 'refresh_token')).toBe(200);
    expect((await messagesWith(url, tokens.access_token as string)).status).toBe(401);
  });

  test('another instance sees the revocation within the session cache, the revoking one at once', async () => {
    setup = await startSignInGateway({ harness: { settings: { sessionCacheSeconds: 0.5 } } });
    const url = setup.gateway.url;
    const other = await startGateway({
      config: { upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }], identity: { issuer: setup.idp.issuer, clientId: setup.idp.clientId } },
      shareStoreWith: setup.gateway,
      settings: { sessionCacheSeconds: 0.5 },
    });
    try {
      const tokens = await signIn(url, ALICE);
      expect((await messagesWith(other.url, tokens.access_token as string)).status).toBe(200);
      expect(await revoke(url, tokens.access_token as string)).toBe(200);
      expect((await messagesWith(url, tokens.access_token as string)).status).toBe(401);
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect((await messagesWith(other.url, tokens.access_token as string)).status).toBe(401);
    } finally {
      await other.close();
    }
  });

  test('unknown and foreign tokens are answered 200 and change nothing; a request without a token is invalid', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const tokens = await signIn(url, ALICE);
    for (const token of [`gwt_${'A'.repeat(43)}`, 'sk-ant-whatever', `gwr_${'B'.repeat(43)}`]) expect(await revoke(url, token)).toBe(200);
    expect((await messagesWith(url, tokens.access_token as string)).status).toBe(200);
    const missing = await fetch(`${url}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'token_type_hint=access_token' });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
  });
});
