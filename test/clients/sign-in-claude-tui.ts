import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nthOpenedLink, type HelperHome } from '../support/login-helper.ts';
import type { TestUser } from '../support/oidc-idp.ts';
import { CLAUDE, claudeEnv } from './clis.ts';
import { CLAUDE_MODEL, CLAUDE_SMALL_MODEL, type SignInEnvironment } from './sign-in-environment.ts';
import type { TapExchange } from './tap.ts';
import { startTui, type Tui } from './tui.ts';

/**
 * Claude Code's TUI signed in to the sign-in environment's gateway with its own /login, for the
 * sign-in cells' files (sign-in-claude-code.test.ts, sign-in-claude-code-caps.test.ts): a HOME,
 * the TUI under the organization's managed settings, the /login dialogue, and what the tap saw.
 */
export interface ClaudeSession {
  tui: Tui;
  home: string;
  /** Where the browser script writes the links Claude Code opens. */
  opened: string;
}

/** A fresh HOME past onboarding, the project folder trusted, and a browser that writes links down. */
export function claudeHome(env: SignInEnvironment): { home: string; cwd: string; browser: string; opened: string } {
  const home = env.dir('claude-home');
  const cwd = env.dir('claude-work');
  writeFileSync(join(home, '.claude.json'), JSON.stringify({ hasCompletedOnboarding: true, theme: 'dark', numStartups: 5, projects: { [cwd]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } } }));
  const opened = join(home, 'opened.txt');
  const browser = join(home, 'browser.sh');
  writeFileSync(browser, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`, { mode: 0o755 });
  return { home, cwd, browser, opened };
}

/** Claude Code's TUI under the organization's managed settings: the gateway sign-in, at <host>/first. */
export async function startClaude(env: SignInEnvironment): Promise<ClaudeSession> {
  const { home, cwd, browser, opened } = claudeHome(env);
  const tui = await startTui({
    binary: CLAUDE.binary,
    args: [],
    env: claudeEnv({}, home, { TERM: 'xterm-256color', BROWSER: browser, ANTHROPIC_MODEL: CLAUDE_MODEL, ANTHROPIC_DEFAULT_HAIKU_MODEL: CLAUDE_SMALL_MODEL, NODE_EXTRA_CA_CERTS: env.caFile }),
    cwd,
    dir: env.dir('claude-tui'),
    managedSettings: { forceLoginMethod: 'gateway', forceLoginGatewayUrl: `${env.url}/first` },
  });
  await tui.waitFor(/Cloud gateway/);
  return { tui, home, opened };
}

/** The tap's exchanges with this method and path (query left off), from index `from` on. */
export const exchangesTo = (env: SignInEnvironment, method: string, path: string, from = 0): TapExchange[] =>
  env.tap.exchanges.slice(from).filter((exchange) => exchange.method === method && exchange.url.split('?')[0] === path);

/** The first such exchange after `from`, once the tap has it (a client's request made in the background). */
export async function waitForExchange(env: SignInEnvironment, method: string, path: string, from: number, timeoutMs = 15_000): Promise<TapExchange> {
  for (const until = Date.now() + timeoutMs; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 200))) {
    const [found] = exchangesTo(env, method, path, from);
    if (found?.endedAt !== undefined) return found;
  }
  throw new Error(`no ${method} ${path} reached the gateway within ${timeoutMs} ms`);
}

/** The tokens of the last 200 from the token endpoint (the device grant's, or a refresh's). */
export function lastTokens(env: SignInEnvironment): { access_token: string; refresh_token: string; email?: string } {
  const answer = exchangesTo(env, 'POST', '/oauth/token').filter((exchange) => exchange.status === 200).at(-1);
  if (!answer) throw new Error('the token endpoint never answered 200');
  return JSON.parse(answer.response);
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** /login in the TUI, the person's part in Chromium, the email confirmed. Returns what the screens showed. */
export async function signIn(env: SignInEnvironment, session: ClaudeSession, user: TestUser): Promise<{ code: string; link: string; page: string; screens: string[] }> {
  const { tui } = session;
  const screens: string[] = [];
  await tui.submit('/login');
  screens.push(await tui.waitFor(/Your organization's gateway URL, set by managed settings\./));
  await tui.press('Enter');
  // First contact with this gateway: trust it (the choice starts on "No").
  screens.push(await tui.waitFor(/Trust gateway 127\.0\.0\.1\?/));
  await tui.press('Up', 'Enter');
  const codeScreen = await tui.waitFor(/Code:\s+[A-Z]{4}-[A-Z]{4}/);
  screens.push(codeScreen);
  const code = /Code:\s+([A-Z]{4}-[A-Z]{4})/.exec(codeScreen)?.[1] as string;
  const link = await nthOpenedLink({ opened: session.opened } as HelperHome, 1);
  const page = await env.approve(link, user);
  screens.push(await tui.waitFor(new RegExp(`Signed in to Cloud gateway as ${escape(user.email)}`)));
  await tui.press('Up', 'Enter');
  screens.push(await tui.waitFor(/Connected to Cloud gateway/));
  await tui.press('Enter');
  screens.push(await tui.waitFor(/Login successful/));
  return { code, link, page, screens };
}

/**
 * Amounts in cents as Claude Code 2.1.332 writes them in /usage (its `sa` and `uJ`): when every
 * amount shown together is whole dollars, without decimals ("$4 / $5"), else all with two
 * ("$4.12 / $5.00"); en-US grouping ("$1,250.00"). As a regular expression source.
 */
export function claudeDollars(...cents: number[]): string[] {
  const whole = cents.every((amount) => amount % 100 === 0);
  return cents.map((amount) => escape(`$${(amount / 100).toLocaleString('en-US', whole ? {} : { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`));
}
