import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`; CI installs it when missing, .ci/run). */
export const CHROMIUM = '/usr/bin/chromium';

export interface TestBrowser {
  browser: Browser;
  /** A fresh context (cookies of its own), its first page, and what went wrong in it. */
  newPage(): Promise<{ context: BrowserContext; page: Page; problems: string[] }>;
  close(): Promise<void>;
}

/**
 * A real browser for page tests: headless Chromium driven by playwright-core, on loopback only
 * (no background networking, no component updates, no sync), with a fresh profile (playwright
 * launches every browser with a new temporary user-data directory). `problems`
 * collects page errors and Content-Security-Policy violations, which the tests expect to be none.
 */
export async function launchBrowser(options: { ignoreHTTPSErrors?: boolean } = {}): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return {
    browser,
    async newPage() {
      const context = await browser.newContext({ ignoreHTTPSErrors: options.ignoreHTTPSErrors === true });
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('console', (message) => {
        if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(`console: ${message.text()}`);
      });
      return { context, page, problems };
    },
    async close() {
      await browser.close();
    },
  };
}

/**
 * A person's part of a device sign-in, in a fresh context: the verification link (the code
 * filled in), Continue, Approve, the IdP's form (test/support/oidc-idp.ts), back at the
 * gateway's "Signed in" page. Returns that page's text; page errors and CSP violations throw.
 */
export async function approveSignIn(browser: TestBrowser, link: string, user: { sub: string; password: string }): Promise<string> {
  const { context, page, problems } = await browser.newPage();
  try {
    await page.goto(link);
    await page.click('button[type=submit]');
    await page.click('button[value=approve]');
    await page.fill('#username', user.sub);
    await page.fill('#password', user.password);
    await page.click('#sign-in');
    await page.waitForSelector('h1:has-text("Signed in")');
    if (problems.length > 0) throw new Error(`the sign-in pages had problems: ${problems.join('; ')}`);
    return (await page.textContent('body')) ?? '';
  } finally {
    await context.close();
  }
}
