import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { launchBrowser, type TestBrowser } from '../../support/browser.ts';
import { screenshot, seriousViolations, tabTo } from '../../support/console-browser.ts';
import { startTestIdp, type TestIdp, type TestUser } from '../../support/oidc-idp.ts';
import { startDevServer, tempDir, type DevServer } from '../../support/processes.ts';

/**
 * The console's sign-in through a real OpenID provider (oidc-provider), in Chromium, against the
 * real npm start: an admin-group member, a viewer, and someone in neither group.
 */
const ADA: TestUser = { sub: 'ada', password: 'ada-password', email: 'ada@example.com', name: 'Ada Admin', groups: ['gateway-admins'] };
const VIV: TestUser = { sub: 'viv', password: 'viv-password', email: 'viv@example.com', groups: ['gateway-viewers'] };
const EVE: TestUser = { sub: 'eve', password: 'eve-password', email: 'eve@example.com', groups: ['engineering'] };

describe('the console with an identity provider, in a browser', () => {
  let idp: TestIdp;
  let server: DevServer;
  let browser: TestBrowser;

  beforeAll(async () => {
    idp = await startTestIdp({ users: [ADA, VIV, EVE] });
    const dataDir = tempDir('gateway-console-idp-');
    const config = join(dataDir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        upstreams: { sim: { type: 'simulator' } },
        routes: [{ model: '*', upstream: 'sim' }],
        identity: { issuer: idp.issuer, clientId: idp.clientId, clientSecretEnv: 'TEST_IDP_SECRET', adminGroups: ['gateway-admins'], viewerGroups: ['gateway-viewers'] },
      }),
    );
    server = await startDevServer({ GATEWAY_DATA_DIR: dataDir, GATEWAY_CONFIG: config, TEST_IDP_SECRET: idp.clientSecret as string });
    await idp.allowRedirect(`${server.url}/oauth/callback`);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await idp?.close();
  });

  /** From the console's sign-in screen through the IdP's form, with the keyboard. */
  async function signIn(page: Page, user: TestUser): Promise<void> {
    await page.goto(`${server.url}/admin`);
    await page.getByRole('heading', { name: 'Sign in to the gateway console' }).waitFor();
    await tabTo(page, page.getByRole('link', { name: 'Sign in with your identity provider' }));
    await page.keyboard.press('Enter');
    await page.locator('#username').waitFor();
    await page.locator('#username').focus();
    await page.keyboard.type(user.sub);
    await page.keyboard.press('Tab');
    await page.keyboard.type(user.password);
    await page.keyboard.press('Enter');
  }

  test('an admin-group member signs in with the IdP and sees the console as admin', async () => {
    const { page, problems } = await browser.newPage();
    await page.goto(`${server.url}/admin`);
    await page.getByRole('heading', { name: 'Sign in to the gateway console' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'sign-in-desktop');
    await signIn(page, ADA);
    await page.waitForURL(`${server.url}/admin`);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.getByText('ada@example.com · admin').waitFor();
    await page.goto(`${server.url}/admin#/people`);
    const row = page.getByRole('row').filter({ hasText: 'ada@example.com' });
    await row.waitFor();
    expect(await row.textContent()).toContain('gateway-admins');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'people-signed-in-desktop');
    expect(problems).toEqual([]);
  });

  test('a viewer-group member signs in as a viewer: no buttons that change anything', async () => {
    const { page, problems } = await browser.newPage();
    await signIn(page, VIV);
    await page.getByText('viv@example.com · viewer').waitFor();
    await page.goto(`${server.url}/admin#/keys`);
    await page.getByText('You are a viewer').waitFor();
    expect(await page.getByRole('button', { name: 'New key' }).count()).toBe(0);
    expect(problems).toEqual([]);
  });

  test('someone in neither group is told so, and has no session', async () => {
    const { page } = await browser.newPage();
    await signIn(page, EVE);
    await page.getByRole('heading', { name: 'Not a console user' }).waitFor();
    // The browser's own cookies (the refusal page's CSP lets it fetch nothing itself).
    expect((await page.context().request.get(`${server.url}/admin/api/session`)).status()).toBe(401);
    expect(await seriousViolations(page)).toEqual([]);
  });
});
