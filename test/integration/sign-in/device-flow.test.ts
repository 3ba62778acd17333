import { logOf } from '../../support/gateway-harness.ts';
import { messagesWith, startSignInGateway, ALICE, type SignInSetup } from '../../support/sign-in-gateway.ts';
import { approveInBrowser, DEVICE_GRANT, enterCode, poll, refresh, ScriptedBrowser, signIn, startDeviceFlow, tokenRequest } from '../../support/sign-in.ts';

/**
 * The device flow exactly as Claude Code's /login runs it (its gateway protocol): metadata read
 * from `<base>/.well-known/oauth-authorization-server` with base `<host>/first`, a form-encoded
 * device authorization carrying only `surface`, polling form-encoded without client_id, the
 * email in the token answer.
 */
describe('device flow', () => {
  let setup: SignInSetup;
  afterEach(() => setup?.close());

  test('metadata: absolute same-origin endpoints, revocation, the device grant, no authorization endpoint; at every path clients look', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    for (const path of ['/first/.well-known/oauth-authorization-server', '/.well-known/oauth-authorization-server', '/.well-known/oauth-authorization-server/first']) {
      const response = await fetch(`${url}${path}`, { headers: { 'user-agent': 'claude-code/2.1.332' } });
      expect(response.status).toBe(200);
      const metadata = (await response.json()) as Record<string, unknown>;
      expect(metadata).toMatchObject({
        device_authorization_endpoint: `${url}/oauth/device_authorization`,
        token_endpoint: `${url}/oauth/token`,
        revocation_endpoint: `${url}/oauth/revoke`,
        grant_types_supported: [DEVICE_GRANT, 'refresh_token'],
      });
      expect(metadata.issuer).toBe(path.endsWith('/first') ? `${url}/first` : url);
      expect(metadata).not.toHaveProperty('authorization_endpoint');
    }
  });

  test('without identity configured, none of the sign-in paths exists', async () => {
    const { startGateway } = await import('../../support/gateway-harness.ts');
    const gateway = await startGateway({ config: { upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }] } });
    try {
      for (const [method, path] of [['GET', '/.well-known/oauth-authorization-server'], ['GET', '/device'], ['POST', '/oauth/token'], ['GET', '/oauth/callback']]) {
        const response = await fetch(`${gateway.url}${path}`, { method, ...(method === 'POST' ? { body: 'grant_type=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } } : {}) });
        expect(response.status).toBe(404);
        await response.arrayBuffer();
      }
    } finally {
      await gateway.close();
    }
  });

  test('device authorization: only surface, base-20 user code, 256-bit device code, 600 s, interval 5, login notice', async () => {
    setup = await startSignInGateway({ identity: { loginNotice: 'Use your company account. Questions: #help-ai' } });
    const url = setup.gateway.url;
    const device = await startDeviceFlow(url);
    expect(device.device_code).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    expect(Buffer.from(device.device_code, 'base64url').length).toBeGreaterThanOrEqual(32);
    expect(device.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(device).toMatchObject({ verification_uri: `${url}/device`, verification_uri_complete: `${url}/device?user_code=${device.user_code}`, expires_in: 600, interval: 5, login_notice: 'Use your company account. Questions: #help-ai' });
    // Unknown parameters (and the standard ones Claude Code does not send) are ignored, not refused.
    const other = await startDeviceFlow(url, { surface: 'claude_code', client_id: 'anything', scope: 'openid', future_param: 'x' });
    expect(other.user_code).not.toBe(device.user_code);
    const bare = await fetch(`${url}/oauth/device_authorization`, { method: 'POST', headers: { 'content-length': '0' } });
    expect(bare.status).toBe(200);
    await bare.arrayBuffer();
    // Each device code is its own.
    expect(new Set([device.device_code, other.device_code]).size).toBe(2);
  });

  test('the client\'s whole sign-in: pending, slow_down when polled too fast, then tokens with email, once', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const device = await startDeviceFlow(url);
    expect(await poll(url, device.device_code)).toMatchObject({ status: 400, body: { error: 'authorization_pending' } });
    // Sooner than the interval: slow_down, and the interval grows by 5 s for this and every later poll (RFC 8628 §3.5).
    const tooFast = await poll(url, device.device_code);
    expect(tooFast).toMatchObject({ status: 400, body: { error: 'slow_down' } });
    setup.advance(6_000);
    expect((await poll(url, device.device_code)).body.error).toBe('slow_down');
    setup.advance(15_000);
    expect((await poll(url, device.device_code)).body.error).toBe('authorization_pending');

    const page = await approveInBrowser(new ScriptedBrowser(), url, device.user_code, ALICE);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`You are signed in as ${ALICE.email}`);
    const tokens = await poll(url, device.device_code);
    expect(tokens.status).toBe(200);
    expect(tokens.headers.get('cache-control')).toBe('no-store');
    expect(tokens.body).toEqual({ access_token: expect.stringMatching(/^gwt_/), token_type: 'Bearer', expires_in: 3600, refresh_token: expect.stringMatching(/^gwr_/), email: ALICE.email });
    expect((await messagesWith(url, tokens.body.access_token as string)).status).toBe(200);
    // Single use: the device code hands its tokens out once.
    expect(await poll(url, device.device_code)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  test('the token answer follows accessTokenMinutes; the user code is gone once used', async () => {
    setup = await startSignInGateway({ identity: { accessTokenMinutes: 15 } });
    const url = setup.gateway.url;
    const device = await startDeviceFlow(url);
    await approveInBrowser(new ScriptedBrowser(), url, device.user_code, ALICE);
    expect((await poll(url, device.device_code)).body.expires_in).toBe(900);
    const again = await enterCode(new ScriptedBrowser(), url, device.user_code);
    expect(again.status).toBe(400);
    expect(again.text).toContain('That code was not recognized');
  });

  test('the OAuth endpoints also answer under /first (Claude Code\'s fallback when the metadata names another origin)', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const response = await fetch(`${url}/first/oauth/device_authorization`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'surface=claude_code' });
    const device = (await response.json()) as { verification_uri: string; user_code: string; device_code: string };
    expect(device.verification_uri).toBe(`${url}/device`);
    await approveInBrowser(new ScriptedBrowser(), url, device.user_code, ALICE);
    const tokens = await fetch(`${url}/first/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: DEVICE_GRANT, device_code: device.device_code }) });
    expect(tokens.status).toBe(200);
    const revoked = await fetch(`${url}/first/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: ((await tokens.json()) as { access_token: string }).access_token }) });
    expect(revoked.status).toBe(200);
  });

  test('bad requests get OAuth error bodies with the right status', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    expect(await tokenRequest(url, { grant_type: DEVICE_GRANT })).toMatchObject({ status: 400, body: { error: 'invalid_request', error_description: expect.any(String) } });
    expect(await tokenRequest(url, { grant_type: 'password', username: 'a', password: 'b' })).toMatchObject({ status: 400, body: { error: 'unsupported_grant_type' } });
    expect(await tokenRequest(url, {})).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    // A device code never issued (or deleted after expiry) reads as expired.
    expect(await poll(url, 'A'.repeat(43))).toMatchObject({ status: 400, body: { error: 'expired_token' } });
    const json = await fetch(`${url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"grant_type":"refresh_token"}' });
    expect(json.status).toBe(400);
    expect(await json.json()).toMatchObject({ error: 'invalid_request' });
    const wrongMethod = await fetch(`${url}/oauth/token`);
    expect(wrongMethod.status).toBe(405);
    expect(await wrongMethod.json()).toMatchObject({ error: 'invalid_request' });
    const tooBig = await fetch(`${url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `grant_type=refresh_token&pad=${'x'.repeat(20_000)}` });
    expect(tooBig.status).toBe(413);
    expect(await tooBig.json()).toMatchObject({ error: 'invalid_request' });
  });

  test('a sign-in token works on every bearer route; a garbled one is refused like a bad key', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const tokens = await signIn(url, ALICE);
    const bearer = { authorization: `Bearer ${tokens.access_token}` };
    const models = await fetch(`${url}/first/v1/models`, { headers: bearer });
    expect(models.status).toBe(200);
    const responses = await fetch(`${url}/second/v1/responses`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: '{"model":"gpt-5.5","input":"hi"}' });
    expect(responses.status).toBe(200);
    await responses.text();
    // apiKeyHelper sends the token in x-api-key as well.
    const viaApiKey = await fetch(`${url}/first/v1/models`, { headers: { 'x-api-key': tokens.access_token as string } });
    expect(viaApiKey.status).toBe(200);
    const garbled = `${(tokens.access_token as string).slice(0, -1)}A`;
    const refused = await messagesWith(url, garbled);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body).error.type).toBe('authentication_error');
    await models.text();
    await viaApiKey.text();
    // Requests of a session are logged (and metered) under the person, never with the token.
    // The line is written once the usage is: wait for it rather than race it.
    expect(await logOf(setup.gateway, responses.headers.get('request-id'))).toMatchObject({ route: 'responses', sub: ALICE.sub });
    expect(setup.gateway.rawLogs.join('\n')).not.toContain(tokens.access_token as string);
  });
});

describe('client authentication at the IdP', () => {
  let setup: SignInSetup;
  afterEach(() => setup?.close());

  test('client_secret_post, as the app is registered', async () => {
    setup = await startSignInGateway({ idp: { clientAuth: 'client_secret_post' }, identity: { tokenEndpointAuthMethod: 'client_secret_post' } });
    expect((await signIn(setup.gateway.url, ALICE)).email).toBe(ALICE.email);
    expect(setup.idp.calls.get('token:form')).toBe(1);
    expect(setup.idp.calls.get('token:basic')).toBeUndefined();
  });

  test('client_secret_basic by default (when the IdP offers it)', async () => {
    setup = await startSignInGateway();
    await signIn(setup.gateway.url, ALICE);
    expect(setup.idp.calls.get('token:basic')).toBe(1);
    expect(setup.idp.calls.get('token:form')).toBeUndefined();
  });

  test('a public client (no secret): PKCE alone', async () => {
    setup = await startSignInGateway({ idp: { clientAuth: 'none' } });
    const tokens = await signIn(setup.gateway.url, ALICE);
    expect(setup.idp.calls.get('token:basic')).toBeUndefined();
    expect((await refresh(setup.gateway.url, tokens.refresh_token as string)).status).toBe(200);
  });

  test('a wrong client secret: the sign-in fails, the client is told, the log says why', async () => {
    setup = await startSignInGateway({ clientSecret: 'not-the-secret' });
    const url = setup.gateway.url;
    const device = await startDeviceFlow(url);
    const page = await approveInBrowser(new ScriptedBrowser(), url, device.user_code, ALICE);
    expect(page.status).toBe(502);
    expect(page.text).toContain('could not complete the sign-in');
    expect(await poll(url, device.device_code)).toMatchObject({ status: 400, body: { error: 'access_denied' } });
    expect(setup.gateway.logs).toContainEqual(expect.objectContaining({ msg: 'audit', type: 'sign_in_refused', reason: 'idp_unavailable', detail: expect.stringContaining('invalid_client') }));
  });
});
