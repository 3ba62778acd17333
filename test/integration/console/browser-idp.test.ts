import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { launchBrowser, type TestBrowser } from '../../support/browser.ts';
import { DESKTOP, overflowsSideways, PHONE, screenshot, seriousViolations, tabTo } from '../../support/console-browser.ts';
import { startTestIdp, type TestIdp, type TestUser } from '../../support/oidc-idp.ts';
import { startDevServer, tempDir, type DevServer } from '../../support/processes.ts';
import { signIn as signInClient } from '../../support/sign-in.ts';
import { messagesWith } from '../../support/sign-in-gateway.ts';

/**
 * The console's sign-in through a real OpenID provider (oidc-provider), in Chromium, against the
 * real npm start: an admin-group member, a viewer, and someone in neither group; an admin
 * setting a developer's own cap on their page, and the gateway holding the developer to it.
 */
const ADA: TestUser = { sub: 'ada', password: 'ada-password', email: 'ada@example.com', name: 'Ada Admin', groups: ['gateway-admins'] };
const VIV: TestUser = { sub: 'viv', password: 'viv-password', email: 'viv@example.com', groups: ['gateway-viewers'] };
const EVE: TestUser = { sub: 'eve', password: 'eve-password', email: 'eve@example.com', groups: ['engineering'] };
const DEV: TestUser = { sub: 'dev', password: 'dev-password', email: 'dev@example.com', groups: ['engineering'] };

describe('the console with an identity provider, in a browser', () => {
  let idp: TestIdp;
  let server: DevServer;
  let browser: TestBrowser;

  beforeAll(async () => {
    idp = await startTestIdp({ users: [ADA, VIV, EVE, DEV] });
    const dataDir = tempDir('gateway-console-idp-');
    const config = join(dataDir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        upstreams: { sim: { type: 'simulator' } },
        routes: [{ model: '*', upstream: 'sim' }],
        identity: { issuer: idp.issuer, clientId: idp.clientId, clientSecretEnv: 'TEST_IDP_SECRET', adminGroups: ['gateway-admins'], viewerGroups: ['gateway-viewers'], caps: { default: { daily: 50 } } },
      }),
    );
    // Own caps apply at once (by default within 10 s: GATEWAY_SESSION_CACHE_SECONDS).
    server = await startDevServer({ GATEWAY_DATA_DIR: dataDir, GATEWAY_CONFIG: config, TEST_IDP_SECRET: idp.clientSecret as string, GATEWAY_SESSION_CACHE_SECONDS: '0' });
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
    // A person's page: their effective caps, and no form to change them.
    await page.goto(`${server.url}/admin#/people`);
    await page.getByRole('button', { name: 'Details of viv@example.com' }).click();
    await page.getByRole('dialog').getByRole('table', { name: 'Effective caps' }).waitFor();
    expect(await page.getByRole('button', { name: 'Save caps' }).count()).toBe(0);
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

  test("an admin sets a developer's own daily cap on their page with the keyboard; the effective cap changes, and the gateway refuses them over it", async () => {
    const developer = (await signInClient(server.url, DEV)).access_token as string;
    expect((await messagesWith(server.url, developer)).status).toBe(200);
    const { page, problems } = await browser.newPage();
    await signIn(page, ADA);
    await page.getByText('ada@example.com · admin').waitFor();
    await page.goto(`${server.url}/admin#/people`);
    await tabTo(page, page.getByRole('button', { name: 'Details of dev@example.com' }));
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'dev@example.com' });
    const daily = dialog.getByRole('table', { name: 'Effective caps' }).getByRole('row').filter({ hasText: 'Daily' });
    await daily.waitFor();
    expect((await daily.textContent())?.replace(/\s+/g, ' ')).toContain('$50.00 USDorganization default');
    expect(await seriousViolations(page)).toEqual([]);

    await tabTo(page, dialog.getByLabel(/^Daily cap/));
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await tabTo(page, dialog.getByLabel('Daily cap in US dollars'));
    await page.keyboard.type('0.000001');
    await tabTo(page, dialog.getByRole('button', { name: 'Save caps' }));
    await page.keyboard.press('Enter');
    await dialog.getByRole('status').filter({ hasText: 'Own caps saved' }).waitFor();
    expect((await daily.textContent())?.replace(/\s+/g, ' ')).toContain('$0.000001 USDown cap');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'person-caps-desktop');
    await page.setViewportSize(PHONE);
    expect(await overflowsSideways(page)).toEqual([]);
    await screenshot(page, 'person-caps-phone');
    await page.setViewportSize(DESKTOP);

    // The request path reads the cap an admin just set: the developer has spent more than it.
    const refused = await messagesWith(server.url, developer);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({ type: 'error', error: { type: 'billing_error' } });
    expect(problems).toEqual([]);
  });
});
