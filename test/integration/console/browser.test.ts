import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { launchBrowser, type TestBrowser } from '../../support/browser.ts';
import { DESKTOP, overflowsSideways, PHONE, screenshot, seriousViolations, tabTo } from '../../support/console-browser.ts';
import { runKeys, startDevServer, tempDir, type DevServer } from '../../support/processes.ts';

/**
 * The console in Chromium against the real npm start (no identity provider): the one-time link
 * it leaves, keys made, used and revoked with the keyboard alone, traffic shown exactly as the
 * usage table holds it, markup in names shown as text, the refusals a browser can provoke,
 * accessibility on every view, and screenshots at desktop and phone width (CI artefacts).
 */
const MARKUP = '<img src=x onerror="globalThis.pwned=1">';
const DAY = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('the console in a browser, on npm start', () => {
  const dataDir = tempDir('gateway-console-');
  const env = { GATEWAY_DATA_DIR: dataDir, GATEWAY_KEY_CACHE_SECONDS: '0', GATEWAY_CONFIG: join(dataDir, 'config.json') };
  let server: DevServer;
  let browser: TestBrowser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    // The simulator answers every model; one configured model's name carries markup.
    writeFileSync(env.GATEWAY_CONFIG, JSON.stringify({ upstreams: { sim: { type: 'simulator' } }, routes: [{ model: 'claude-sonnet-5', upstream: 'sim' }, { model: 'gpt-5.5', upstream: 'sim' }, { model: MARKUP, upstream: 'sim' }, { model: '*', upstream: 'sim' }] }));
    server = await startDevServer(env);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const keys = async (args: string[]) => {
    const result = await runKeys([...args, '--json'], env);
    if (result.code !== 0) throw new Error(`keys ${args.join(' ')}: ${result.stderr}`);
    return JSON.parse(result.stdout);
  };
  const messages = async (key: string, model: string) => {
    const response = await fetch(`${server.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, max_tokens: 32, messages: [{ role: 'user', content: `hello ${model}` }] }) });
    await response.text();
    return response.status;
  };
  const signInWith = async (link: string, into: Page) => {
    await into.goto(link);
    await tabTo(into, into.getByRole('button', { name: 'Sign in to the console' }));
    await into.keyboard.press('Enter');
    await into.waitForURL(`${server.url}/admin`);
    await into.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  };

  test('npm start leaves a one-time link: it signs in once, and not again', async () => {
    const link = /http\S+/.exec(readFileSync(join(dataDir, 'console-link.txt'), 'utf8'))?.[0] as string;
    expect(server.output()).toContain(`Console:   ${server.url}/admin`);
    expect(server.output()).not.toContain(link);
    ({ context, page, problems } = await browser.newPage());
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await signInWith(link, page);
    await page.getByText('one-time link · admin').waitFor();

    const other = await browser.newPage();
    await other.page.goto(link);
    await other.page.getByRole('button', { name: 'Sign in to the console' }).click();
    await other.page.getByRole('heading', { name: 'Not signed in' }).waitFor();
    expect(await other.page.textContent('main')).toContain('expired or was already used');
    await other.context.close();
  });

  test('with the keyboard alone: a key is made, copied, used, and revoked; its markup name stays text', async () => {
    await page.goto(`${server.url}/admin#/keys`);
    await page.getByRole('heading', { level: 1, name: 'Keys' }).waitFor();
    await tabTo(page, page.getByRole('button', { name: 'New key' }));
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'New key' });
    await dialog.waitFor();
    // The dialog took the focus; the name field is the first field.
    await tabTo(page, dialog.getByLabel('Name', { exact: true }));
    await page.keyboard.type(MARKUP);
    await tabTo(page, dialog.getByLabel(/Spend per UTC day/));
    await page.keyboard.type('5');
    await tabTo(page, dialog.getByRole('button', { name: 'Create key' }));
    await page.keyboard.press('Enter');
    const issued = page.getByRole('dialog', { name: 'Your new key' });
    await issued.waitFor();
    const key = await issued.getByRole('textbox').inputValue();
    expect(key).toMatch(/^gwk_/);
    await tabTo(page, issued.getByRole('button', { name: 'Copy' }));
    await page.keyboard.press('Enter');
    await issued.getByText('Copied.').waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText())).toBe(key);
    await screenshot(page, 'keys-new-key-desktop');
    await tabTo(page, issued.getByRole('button', { name: 'Done' }));
    await page.keyboard.press('Enter');

    expect(await messages(key, 'claude-sonnet-5')).toBe(200);
    const row = page.getByRole('row').filter({ hasText: MARKUP });
    await row.waitFor();
    expect(await row.getByRole('rowheader').textContent()).toContain(MARKUP);
    await tabTo(page, page.getByRole('button', { name: `Revoke ${MARKUP}` }));
    await page.keyboard.press('Enter');
    const confirm = page.getByRole('dialog', { name: `Revoke ${MARKUP}?` });
    await tabTo(page, confirm.getByRole('button', { name: 'Revoke the key' }));
    await page.keyboard.press('Enter');
    await row.getByText('revoked').waitFor();
    expect(await messages(key, 'claude-sonnet-5')).toBe(401);
    expect(await page.evaluate(() => (globalThis as { pwned?: unknown }).pwned)).toBeUndefined();
    expect(await page.locator('img').count()).toBe(0);
  });

  test('traffic: the table shows exactly what the usage table holds, the chart the same numbers, times in the viewer\'s zone', async () => {
    const alpha = await keys(['create', '--name', 'alpha']);
    const beta = await keys(['create', '--name', 'beta']);
    const plan: [typeof alpha, string, number][] = [
      [alpha, 'claude-sonnet-5', 3],
      [alpha, MARKUP, 2],
      [beta, 'gpt-5.5', 4],
    ];
    for (const [who, model, times] of plan) for (let i = 0; i < times; i++) expect(await messages(who.key, model)).toBe(200);
    // What the usage table holds, through the key CLI; usage is written every second.
    const usageOf = async (id: string) => {
      for (let attempt = 0; ; attempt++) {
        const usage = await keys(['usage', id, '--since', DAY(Date.now() - 86_400_000)]);
        if (usage.totals.requests === (id === alpha.id ? 5 : 4) || attempt > 40) return usage;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const [alphaUsage, betaUsage] = [await usageOf(alpha.id), await usageOf(beta.id)];
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    const viewer = await browser.browser.newContext({ timezoneId: 'America/New_York', viewport: DESKTOP });
    await context.storageState().then(({ cookies }) => viewer.addCookies(cookies));
    const tab = await viewer.newPage();
    await tab.goto(`${server.url}/admin#/spend?metric=requests&by=key&range=24h&granularity=hour`);
    const table = tab.getByRole('table');
    await table.getByRole('rowheader', { name: 'Total' }).waitFor();
    const header = (await table.locator('thead th').allTextContents()).map((text) => text.trim());
    const totals = (await table.locator('tfoot td').allTextContents()).map((text) => text.trim());
    const totalOf = (name: string) => totals[header.indexOf(name) - 1];
    expect([totalOf('alpha'), totalOf('beta')]).toEqual([String(alphaUsage.totals.requests), String(betaUsage.totals.requests)]);

    // Cost by model, in dollars with their currency, to the micro-dollar.
    await tab.goto(`${server.url}/admin#/spend?metric=cost&by=model&range=24h&granularity=hour`);
    await tab.getByRole('columnheader', { name: 'gpt-5.5' }).waitFor();
    const costHeader = (await tab.locator('table.data thead th').allTextContents()).map((text) => text.trim());
    const costTotals = (await tab.locator('table.data tfoot td').allTextContents()).map((text) => text.trim());
    const usd = (micro: number) => `${new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: micro < 1e6 ? 6 : 2 }).format(micro / 1e6)} USD`;
    const costOf = (usage: { days: { model: string; costMicroUsd: number }[] }, model: string) => usage.days.filter((day) => day.model === model).reduce((sum, day) => sum + day.costMicroUsd, 0);
    expect(costTotals[costHeader.indexOf('gpt-5.5') - 1]).toBe(usd(costOf(betaUsage, 'gpt-5.5')));
    expect(costTotals[costHeader.indexOf(MARKUP) - 1]).toBe(usd(costOf(alphaUsage, MARKUP)));
    expect(costTotals[costHeader.indexOf('claude-sonnet-5') - 1]).toBe(usd(costOf(alphaUsage, 'claude-sonnet-5') + (await usageOfRevoked())));

    // The chart: its legend names the same series, and at the newest bucket shows that row's values.
    // The legend's first entry is the time axis.
    const legend = (await tab.locator('.u-legend .u-series .u-label').allTextContents()).slice(1).map((text) => text.trim());
    expect(legend).toEqual(costHeader.slice(1, -1));
    const box = (await tab.locator('.u-over').boundingBox()) as { x: number; y: number; width: number; height: number };
    await tab.mouse.move(box.x + box.width - 2, box.y + box.height / 2);
    const lastRow = (await tab.locator('table.data tbody tr').last().locator('td').allTextContents()).map((text) => text.trim());
    const legendValues = (await tab.locator('.u-legend .u-series .u-value').allTextContents()).slice(1).map((text) => text.trim());
    expect(legendValues).toEqual(lastRow.slice(0, -1));

    // Hours read in the viewer's zone (New York), with the UTC time on hover.
    const hour = tab.locator('table.data tbody th time').last();
    const at = (await hour.getAttribute('datetime')) as string;
    expect(await hour.getAttribute('title')).toBe(`${at.replace('T', ' ').slice(0, 19)} UTC`);
    expect(await hour.textContent()).toBe(new Date(at).toLocaleString('en-US', { timeZone: 'America/New_York', year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' }));
    expect(await tab.evaluate(() => (globalThis as { pwned?: unknown }).pwned)).toBeUndefined();
    await viewer.close();

    /** The revoked key of the test before spent on claude-sonnet-5 too. */
    async function usageOfRevoked(): Promise<number> {
      const all = await keys(['usage', '--since', DAY(Date.now() - 86_400_000)]);
      return (all.keys as { id: string; costMicroUsd: number }[]).filter((entry) => entry.id !== alpha.id && entry.id !== beta.id).reduce((sum, entry) => sum + entry.costMicroUsd, 0);
    }
  });

  test('every view: no serious or critical accessibility violation, no sideways scrolling at phone width, screenshots at both widths', async () => {
    const views = ['overview', 'spend', 'keys', 'people', 'upstreams', 'audit'];
    for (const [size, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
      await page.setViewportSize(viewport);
      for (const view of views) {
        await page.goto(`${server.url}/admin#/${view}`);
        await page.getByRole('heading', { level: 1 }).waitFor();
        await page.waitForLoadState('networkidle');
        await page.getByText('Loading…').waitFor({ state: 'detached' });
        expect([view, size, await seriousViolations(page)]).toEqual([view, size, []]);
        if (size === 'phone') expect([view, await overflowsSideways(page)]).toEqual([view, []]);
        await screenshot(page, `${view}-${size}`);
      }
      await page.goto(`${server.url}/admin#/keys`);
      await page.getByRole('button', { name: 'New key' }).click();
      await page.getByRole('dialog', { name: 'New key' }).waitFor();
      expect(['new key dialog', size, await seriousViolations(page)]).toEqual(['new key dialog', size, []]);
      await screenshot(page, `keys-dialog-${size}`);
    }
    await page.setViewportSize(DESKTOP);
    expect(problems).toEqual([]);
  });

  test('refusals a browser can provoke: no CSRF token, a page of another origin, a viewer\'s session', async () => {
    await page.goto(`${server.url}/admin#/overview`);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const before = (await keys(['list'])).length;
    // The page's own origin, the cookie sent, but no CSRF token.
    const noToken = await page.evaluate(() => fetch('/admin/api/keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'no-token' }) }).then((answer) => answer.status));
    expect(noToken).toBe(403);

    // Pages of other origins: on the same machine (127.0.0.1, another port: the same site, so the
    // SameSite=Strict cookie travels) and on another site (localhost). A plain post is sent and
    // refused (its answer unreadable: no CORS, and CORP); one with the token in a header needs a
    // CORS preflight, which the gateway never grants, so it is not sent at all.
    const refusedBefore = (server.output().match(/"route":"admin","status":403/g) ?? []).length;
    const token = await page.evaluate(() => fetch('/admin/api/session').then((answer) => answer.json() as Promise<{ csrfToken: string }>).then((session) => session.csrfToken));
    const evil = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>elsewhere</title>'));
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    const elsewhere = await context.newPage();
    try {
      const port = (evil.address() as AddressInfo).port;
      for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
        await elsewhere.goto(`${origin}/`);
        const outcome = await elsewhere.evaluate(
          async ([target, csrf]) => {
            const simple = await fetch(`${target}/admin/api/keys`, { method: 'POST', credentials: 'include', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ name: 'cross-origin' }) }).then(() => 'sent', () => 'blocked');
            const withToken = await fetch(`${target}/admin/api/keys`, { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json', 'x-csrf-token': csrf as string }, body: JSON.stringify({ name: 'cross-origin-token' }) }).then((answer) => `answered ${answer.status}`, () => 'blocked');
            return [simple, withToken];
          },
          [server.url, token],
        );
        expect([origin, outcome]).toEqual([origin, ['blocked', 'blocked']]);
      }
      // The same-site post reached the gateway and was refused there (its log line); the cross-site one came without the cookie.
      expect((server.output().match(/"route":"admin","status":403/g) ?? []).length).toBeGreaterThan(refusedBefore);
    } finally {
      await elsewhere.close();
      evil.closeAllConnections();
      evil.close();
    }
    expect((await keys(['list'])).length).toBe(before);

    // A viewer: no buttons that change, and the API refuses a change even with the token.
    const link = await keys(['console-link', '--role', 'viewer', '--url', server.url]);
    const viewer = await browser.newPage();
    await signInWith(link.url, viewer.page);
    await viewer.page.goto(`${server.url}/admin#/keys`);
    await viewer.page.getByText('You are a viewer').waitFor();
    await viewer.page.getByRole('table').waitFor();
    expect(await viewer.page.getByRole('button', { name: /New key|Revoke|Rotate|Edit/ }).count()).toBe(0);
    const viewerChange = await viewer.page.evaluate(async () => {
      const session = (await (await fetch('/admin/api/session')).json()) as { csrfToken: string };
      return (await fetch('/admin/api/keys', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken }, body: JSON.stringify({ name: 'by-viewer' }) })).status;
    });
    expect(viewerChange).toBe(403);
    await screenshot(viewer.page, 'keys-viewer-desktop');
    expect(viewer.problems).toEqual([]);
    await viewer.context.close();
    expect((await keys(['list'])).length).toBe(before);
  });

  test('signing out ends the session: the page shows how to sign in again', async () => {
    await page.goto(`${server.url}/admin#/overview`);
    await tabTo(page, page.getByRole('button', { name: 'Sign out' }));
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Sign in to the gateway console' }).waitFor();
    expect(await page.evaluate(() => fetch('/admin/api/session').then((answer) => answer.status))).toBe(401);
    await screenshot(page, 'signed-out-desktop');
  });
});
