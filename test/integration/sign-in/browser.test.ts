import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { launchBrowser, type TestBrowser } from '../../support/browser.ts';
import { messagesWith, startSignInGateway, ALICE, type SignInSetup } from '../../support/sign-in-gateway.ts';
import { poll, startDeviceFlow } from '../../support/sign-in.ts';

/**
 * The verification page and the IdP's login form in a real browser (Chromium), as a developer
 * meets them after Claude Code's /login opened the link.
 */
describe('sign-in in a browser', () => {
  let browser: TestBrowser;
  let setup: SignInSetup;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(() => browser.close());
  afterEach(() => setup?.close());

  test('the link fills the code in and waits for the person; Continue, the IdP\'s form, signed in; the client gets its tokens', async () => {
    setup = await startSignInGateway({ identity: { loginNotice: 'Sign in with your Example Corp account.' } });
    const url = setup.gateway.url;
    const device = await startDeviceFlow(url);
    const { page, problems } = await browser.newPage();
    await page.goto(device.verification_uri_complete);
    expect(await page.inputValue('#user_code')).toBe(device.user_code);
    await expect(page.textContent('body')).resolves.toContain('Sign in with your Example Corp account.');
    // Never submitted for the person: a while later, still the same page, still pending.
    await page.waitForTimeout(300);
    expect(new URL(page.url()).pathname).toBe('/device');
    expect((await poll(url, device.device_code)).body.error).toBe('authorization_pending');

    await page.click('button[type=submit]');
    await page.waitForSelector('dl');
    const details = await page.textContent('dl');
    expect(details).toContain('Claude Code');
    expect(details).toContain('127.0.0.1');
    await page.click('button[value=approve]');
    await page.waitForSelector('#username');
    expect(page.url().startsWith(setup.idp.issuer)).toBe(true);
    await page.fill('#username', ALICE.sub);
    await page.fill('#password', ALICE.password);
    await page.click('#sign-in');
    await page.waitForSelector('h1:has-text("Signed in")');
    expect(new URL(page.url()).pathname).toBe('/oauth/callback');
    await expect(page.textContent('body')).resolves.toContain(`You are signed in as ${ALICE.email}`);
    // How to get the login helper, for Codex and the SDKs with the same identity.
    await expect(page.textContent('body')).resolves.toContain(`curl -fsSo ~/.local/bin/gateway-login ${url}/login/helper.mjs && chmod +x ~/.local/bin/gateway-login`);
    expect(problems).toEqual([]);

    setup.advance(5_000);
    const tokens = await poll(url, device.device_code);
    expect(tokens.status).toBe(200);
    expect(tokens.body.email).toBe(ALICE.email);
    expect((await messagesWith(url, tokens.body.access_token as string)).status).toBe(200);
  });

  test('Deny in the browser stops the client', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const device = await startDeviceFlow(url);
    const { page, problems } = await browser.newPage();
    await page.goto(device.verification_uri);
    await page.fill('#user_code', device.user_code.toLowerCase());
    await page.click('button[type=submit]');
    await page.click('button[value=deny]');
    await page.waitForSelector('h1:has-text("Sign-in denied")');
    expect(problems).toEqual([]);
    expect(await poll(url, device.device_code)).toMatchObject({ status: 400, body: { error: 'access_denied' } });
  });

  test('a form on another origin posting to the page (cross-site request forgery) is refused', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const device = await startDeviceFlow(url);
    // Same site (127.0.0.1), another origin (port): the browser sends the page's cookie along.
    const attacker = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<form id="f" method="post" action="${url}/device"><input name="user_code" value="${device.user_code}"><input name="csrf" value="guess"><input name="action" value="check"></form><script>document.getElementById('f').submit()</script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    try {
      const { page } = await browser.newPage();
      await page.goto(`${url}/device`);
      await page.goto(`http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`);
      await page.waitForURL(`${url}/device`);
      await expect(page.textContent('h1')).resolves.toBe('Request refused');
      expect(setup.gateway.logs).toContainEqual(expect.objectContaining({ msg: 'audit', type: 'request_refused', reason: 'csrf' }));
      expect((await poll(url, device.device_code)).body.error).toBe('authorization_pending');
    } finally {
      attacker.closeAllConnections();
      await new Promise((resolve) => attacker.close(resolve));
    }
  });
});
