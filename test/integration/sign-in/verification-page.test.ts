import { startSignInGateway, ALICE, BOB, type SignInSetup } from '../../support/sign-in-gateway.ts';
import { approveInBrowser, enterCode, field, poll, ScriptedBrowser, startDeviceFlow } from '../../support/sign-in.ts';

/**
 * The verification page and the IdP round trip, refusals first: CSRF, per-IP limits, codes that
 * expired or were denied, a callback in another browser or replayed, people outside the allowed
 * groups, and nothing that redirects anywhere but to the configured IdP.
 */
describe('verification page', () => {
  let setup: SignInSetup;
  afterEach(() => setup?.close());

  const auditReasons = () => setup.gateway.logs.filter((line) => line.msg === 'audit').map((line) => `${line.type}:${line.reason ?? ''}`);

  test('serves a strict page: no script, a CSP, never framed or cached, no referrer', async () => {
    setup = await startSignInGateway();
    const page = await new ScriptedBrowser().get(`${setup.gateway.url}/device`);
    expect(page.status).toBe(200);
    expect(page.text).not.toMatch(/<script/i);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
  });

  test('a code in the link is filled in, never submitted: the grant stays pending until the person confirms', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const device = await startDeviceFlow(url);
    const browser = new ScriptedBrowser();
    const page = await browser.get(device.verification_uri_complete);
    expect(page.text).toContain(`value="${device.user_code}"`);
    expect(page.text).not.toMatch(/<script|http-equiv="refresh"|autofocus.*submit/i);
    expect((await poll(url, device.device_code)).body.error).toBe('authorization_pending');
    // Entering the code shows what asks: the client, when, from where; still nothing approved.
    const confirm = await enterCode(browser, url, device.user_code.toLowerCase().replace('-', ' '));
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('Claude Code');
    expect(confirm.text).toContain('127.0.0.1');
    expect(confirm.text).toContain('claude-code/2.1.332');
    setup.advance(5_000);
    expect((await poll(url, device.device_code)).body.error).toBe('authorization_pending');
  });

  test('CSRF: a post without the page\'s token, without the cookie, or from another site is refused', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const device = await startDeviceFlow(url);
    const browser = new ScriptedBrowser();
    const form = await browser.get(`${url}/device`);
    const csrf = field(form.text, 'csrf');
    const wrongToken = await browser.post(`${url}/device`, { csrf: csrf.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')), user_code: device.user_code });
    expect(wrongToken.status).toBe(403);
    const crossSite = await browser.post(`${url}/device`, { csrf, user_code: device.user_code }, 'https://evil.example');
    expect(crossSite.status).toBe(403);
    const noCookie = await new ScriptedBrowser().post(`${url}/device`, { csrf, user_code: device.user_code });
    expect(noCookie.status).toBe(403);
    // Another browser's token does not fit this browser's cookie.
    const other = new ScriptedBrowser();
    await other.get(`${url}/device`);
    expect((await other.post(`${url}/device`, { csrf, user_code: device.user_code })).status).toBe(403);
    expect(auditReasons().filter((reason) => reason === 'request_refused:csrf')).toHaveLength(4);
    // The real thing still works.
    expect((await browser.post(`${url}/device`, { csrf, user_code: device.user_code })).status).toBe(200);
  });

  test('code entries are limited per IP (10 per 10 minutes), wrong or right', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const browser = new ScriptedBrowser();
    const csrf = field((await browser.get(`${url}/device`)).text, 'csrf');
    for (let i = 0; i < 10; i++) expect((await browser.post(`${url}/device`, { csrf, user_code: 'BBBB-BBBB' })).status).toBe(400);
    const device = await startDeviceFlow(url);
    const limited = await browser.post(`${url}/device`, { csrf, user_code: device.user_code });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.text).toContain('Too many codes');
    setup.advance(600_000);
    expect((await browser.post(`${url}/device`, { csrf, user_code: device.user_code })).status).toBe(400); // expired by now
    expect(auditReasons()).toContain('request_refused:rate_limited');
  });

  test('device authorizations are limited per IP (30 per 10 minutes), answered slow_down', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    for (let i = 0; i < 30; i++) await startDeviceFlow(url);
    const limited = await fetch(`${url}/oauth/device_authorization`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'surface=claude_code' });
    expect(limited.status).toBe(429);
    expect(await limited.json()).toMatchObject({ error: 'slow_down' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  test('callbacks are limited per IP (30 per 10 minutes)', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    for (let i = 0; i < 30; i++) expect((await new ScriptedBrowser().get(`${url}/oauth/callback?state=nothing&code=x`)).status).toBe(400);
    const limited = await new ScriptedBrowser().get(`${url}/oauth/callback?state=nothing&code=x`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  test('an expired code: not recognized on the page, expired_token to the client', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const device = await startDeviceFlow(url);
    setup.advance(601_000);
    const entered = await enterCode(new ScriptedBrowser(), url, device.user_code);
    expect(entered.status).toBe(400);
    expect(entered.text).toContain('not recognized');
    expect(await poll(url, device.device_code)).toMatchObject({ status: 400, body: { error: 'expired_token' } });
  });

  test('Deny on the page: the client gets access_denied', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const device = await startDeviceFlow(url);
    const browser = new ScriptedBrowser();
    const confirm = await enterCode(browser, url, device.user_code);
    const denied = await browser.post(`${url}/device`, { csrf: field(confirm.text, 'csrf'), ticket: field(confirm.text, 'ticket'), action: 'deny' });
    expect(denied.text).toContain('Sign-in denied');
    expect(await poll(url, device.device_code)).toMatchObject({ status: 400, body: { error: 'access_denied' } });
    expect(auditReasons()).toContain('device_denied:');
  });

  test('Cancel at the IdP: the client gets access_denied', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const device = await startDeviceFlow(url);
    const page = await approveInBrowser(new ScriptedBrowser(), url, device.user_code, 'cancel');
    expect(page.status).toBe(403);
    expect(page.text).toContain('did not sign you in (access_denied)');
    expect(await poll(url, device.device_code)).toMatchObject({ status: 400, body: { error: 'access_denied' } });
  });

  test('a person outside allowedGroups is refused and the client told access_denied', async () => {
    setup = await startSignInGateway({ identity: { allowedGroups: ['engineering'] } });
    const url = setup.gateway.url;
    const device = await startDeviceFlow(url);
    const page = await approveInBrowser(new ScriptedBrowser(), url, device.user_code, BOB);
    expect(page.status).toBe(403);
    expect(page.text).toContain('not in a group');
    expect(await poll(url, device.device_code)).toMatchObject({ status: 400, body: { error: 'access_denied' } });
    expect(setup.gateway.logs).toContainEqual(expect.objectContaining({ msg: 'audit', type: 'sign_in_refused', sub: BOB.sub, reason: 'not_in_allowed_groups' }));
  });

  test('a callback opened in another browser (a phished IdP link) is refused, and so is a replayed one', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const device = await startDeviceFlow(url);
    const attacker = new ScriptedBrowser();
    const confirm = await enterCode(attacker, url, device.user_code);
    // The attacker stops at the IdP's authorization URL and sends it to a victim.
    const started = await attacker.postWithoutFollowing(`${url}/device`, { csrf: field(confirm.text, 'csrf'), ticket: field(confirm.text, 'ticket'), action: 'approve' });
    expect(started.status).toBe(303);
    const authorizeUrl = started.headers.get('location') as string;
    const victim = new ScriptedBrowser();
    const login = await victim.get(authorizeUrl);
    const uid = /\/interaction\/([^/]+)\/login/.exec(login.text)?.[1];
    const landed = await victim.post(`${setup.idp.issuer}/interaction/${uid}/login`, { username: ALICE.sub, password: ALICE.password });
    expect(landed.url).toContain(`${url}/oauth/callback`);
    expect(landed.status).toBe(400);
    expect(landed.text).toContain('started in another browser');
    expect(await poll(url, device.device_code)).toMatchObject({ status: 400, body: { error: 'access_denied' } });
    // The same callback URL again: its state was used.
    expect((await victim.get(landed.url)).text).toContain('expired or was already used');
  });

  test('no open redirect: whatever a request asks, the only place sent to is the configured IdP, and back only to /oauth/callback', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const device = await startDeviceFlow(url);
    const browser = new ScriptedBrowser();
    for (const path of ['/device?redirect_uri=https://evil.example/&next=https://evil.example/', '/oauth/callback?state=x&code=y&redirect_uri=https://evil.example/', '/oauth/callback?error=access_denied&return_to=https://evil.example/']) {
      const response = await fetch(`${url}${path}`, { redirect: 'manual' });
      expect(response.headers.get('location')).toBeNull();
      await response.arrayBuffer();
    }
    const confirm = await enterCode(browser, url, device.user_code);
    const started = await browser.postWithoutFollowing(`${url}/device?redirect_uri=https://evil.example/`, {
      csrf: field(confirm.text, 'csrf'),
      ticket: field(confirm.text, 'ticket'),
      action: 'approve',
      redirect_uri: 'https://evil.example/cb',
      return_to: 'https://evil.example/',
    });
    const location = new URL(started.headers.get('location') as string);
    expect(location.origin).toBe(setup.idp.issuer);
    expect(location.searchParams.get('redirect_uri')).toBe(`${url}/oauth/callback`);
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
    expect(location.searchParams.get('client_id')).toBe(setup.idp.clientId);
    for (const name of ['state', 'nonce', 'code_challenge']) expect(location.searchParams.get(name)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  test('a forged ticket or one from another browser cannot approve', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const device = await startDeviceFlow(url);
    const browser = new ScriptedBrowser();
    const confirm = await enterCode(browser, url, device.user_code);
    const ticket = field(confirm.text, 'ticket');
    const csrf = field(confirm.text, 'csrf');
    const forged = ticket.replace(/\.(\d+)\./, (_, expires) => `.${Number(expires) + 3600}.`);
    expect((await browser.post(`${url}/device`, { csrf, ticket: forged, action: 'approve' })).status).toBe(400);
    const other = new ScriptedBrowser();
    const otherCsrf = field((await other.get(`${url}/device`)).text, 'csrf');
    expect((await other.post(`${url}/device`, { csrf: otherCsrf, ticket, action: 'approve' })).status).toBe(400);
    expect((await poll(url, device.device_code)).body.error).toBe('authorization_pending');
  });
});
