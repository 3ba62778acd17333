import { ALICE } from '../support/sign-in-gateway.ts';
import { CLAUDE } from './clis.ts';
import { CellBook } from './conformance.ts';
import { assertIsolated } from './isolation.ts';
import { CLAUDE_ROUTES } from './routes.ts';
import { claudeDollars, exchangesTo, signIn, startClaude, waitForExchange, type ClaudeSession } from './sign-in-claude-tui.ts';
import { CLAUDE_MODEL, startSignInEnvironment, type SignInEnvironment } from './sign-in-environment.ts';
import { CLAUDE_SIGN_IN as S, signInCells } from './sign-in-scenarios.ts';
import type { TapExchange } from './tap.ts';

/**
 * A signed-in person with a spend cap, through Claude Code's own /login (the TUI, as in
 * sign-in-claude-code.test.ts): the warning past 75 %, /usage with the dollars against the cap,
 * and the refusal once it is spent. The spend is real: Claude Code's turns, metered by the
 * gateway at the route's table price ($2 per million input tokens for claude-sonnet-5) for the
 * input tokens the scripted upstream reports. The cells run in order on one person.
 */
const book = new CellBook('claude-code', CLAUDE.name, CLAUDE.version);
const CELL_TIMEOUT_MS = 150_000;
const MESSAGES = '/first/v1/messages';
/** $5.00 a UTC day for everyone. */
const DAILY_CAP_USD = 5;
/** A turn of 2,060,000 input tokens at $2 per million: $4.12 (82 % of the cap; its 7 output tokens add $0.00007). */
const BIG_TURN_TOKENS = 2_060_000;

let env: SignInEnvironment;
let session: ClaudeSession | undefined;

/** The cells take a few minutes and the cap is per UTC day: a run that would cross midnight starts after it. */
const MIDNIGHT_MARGIN_MS = 5 * 60_000;

beforeAll(async () => {
  assertIsolated();
  const untilMidnight = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1) - Date.now();
  if (untilMidnight < MIDNIGHT_MARGIN_MS) await new Promise((resolve) => setTimeout(resolve, untilMidnight + 1_000));
  env = await startSignInEnvironment('claude-sign-in-caps', { caps: { default: { daily: DAILY_CAP_USD } } }, { https: true });
}, 90_000 + MIDNIGHT_MARGIN_MS);

afterAll(async () => {
  await session?.tui.close();
  await env?.close();
});

/** The answers to Claude Code's turns on the main model (not its small-model side requests), from `from` on. */
const turns = (from: number): TapExchange[] => exchangesTo(env, 'POST', MESSAGES, from).filter((exchange) => JSON.parse(exchange.body).model === CLAUDE_MODEL);

/** A turn in the TUI answered `text` by the upstream, reporting `inputTokens`; the main-model exchanges it made. */
async function turn(prompt: string, text: string, inputTokens?: number): Promise<TapExchange[]> {
  if (!session) throw new Error('not signed in (the cap warning cell failed)');
  const before = env.tap.exchanges.length;
  // The turn's own request (Claude Code also asks the main model things in the background).
  env.stubs.anthropic.script({ when: (request) => request.model === CLAUDE_MODEL && request.lastUserText.includes(prompt), text, ...(inputTokens ? { inputTokens } : {}) });
  await session.tui.submit(prompt);
  await session.tui.waitFor(new RegExp(text.replace(/\./g, '\\.')));
  return turns(before);
}

const header = (exchange: TapExchange | undefined, name: string) => exchange?.responseHeaders[`anthropic-ratelimit-unified-${name}`];
const midnightUtc = () => Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1) / 1000;

describe(book.title, () => {
  signInCells(CLAUDE_ROUTES, (route) => {
    const cell = (scenario: (typeof S)[keyof typeof S], fn: () => Promise<void>) => book.cell(route, scenario, 'anthropic', fn, CELL_TIMEOUT_MS);

    cell(S.capWarning, async () => {
      session = await startClaude(env);
      await signIn(env, session, ALICE);
      // Nothing spent yet: the first turn's answer says allowed, and Claude Code shows no warning.
      const [first] = await turn('Spend a lot', 'First answer, metered at four dollars twelve.', BIG_TURN_TOKENS);
      expect(first?.status).toBe(200);
      expect(header(first, 'status')).toBe('allowed');
      expect(header(first, 'overage-surpassed-threshold')).toBeUndefined();
      expect(await session.tui.capture()).not.toMatch(/You've used \d+% of your|usage credits/);
      // Now past 75 %: the next answer warns, with the reset at UTC midnight.
      const [second] = await turn('Say hi', 'Second answer, past the warning line.');
      expect(second?.status).toBe(200);
      expect(header(second, 'status')).toBe('allowed_warning');
      expect(header(second, 'overage-utilization')).toBe('0.82');
      expect(header(second, 'overage-surpassed-threshold')).toBe('0.75');
      expect(header(second, 'overage-reset')).toBe(String(midnightUtc()));
      // A notification under the prompt, for a few seconds: the percent from the header, the reset in the TUI's zone (UTC here).
      await session.tui.waitFor(/You've used 82% of your usage credits · resets 12am \(UTC\)/, { timeoutMs: 10_000 });
    });

    cell(S.capUsage, async () => {
      if (!session) throw new Error('not signed in (the cap warning cell failed)');
      const before = env.tap.exchanges.length;
      await session.tui.submit('/usage');
      try {
        const asked = await waitForExchange(env, 'GET', '/first/api/oauth/usage', before);
        expect(asked.status).toBe(200);
        const usage = JSON.parse(asked.response) as { extra_usage: { used_credits: number; monthly_limit: number; utilization: number }; limits: { group: string; percent: number; resets_at: string; is_active: boolean }[] };
        // The binding cap, in cents: $4.12 and a few hundredths of a cent of Claude Code's side requests, against $5.00.
        expect(usage.extra_usage).toMatchObject({ is_enabled: true, used_credits: 412, monthly_limit: DAILY_CAP_USD * 100, utilization: 82, currency: 'USD' });
        expect(usage.limits).toEqual([{ kind: 'spend', group: 'daily', percent: 82, resets_at: new Date(midnightUtc() * 1000).toISOString(), severity: 'warning', is_active: true }]);
        // The Spend limit bar: "82% used", then "$4.12 / $5.00 spent today · Resets Nov 27, 12am (UTC)".
        const [used, limit] = claudeDollars(usage.extra_usage.used_credits, usage.extra_usage.monthly_limit);
        const resets = new Date(usage.limits[0]!.resets_at).toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
        const screen = await session.tui.waitFor(new RegExp(`${used} / ${limit} spent today · Resets ${resets}, 12am \\(UTC\\)`));
        expect(screen).toMatch(new RegExp(`Spend limit[\\s\\S]*${usage.extra_usage.utilization}% used`));
        expect(screen).not.toMatch(/Spend \(UTC\)|Shown once your gateway reports one|Failed to load usage/);
      } finally {
        // Closed whatever happened, so that the next cell starts at the prompt.
        await session.tui.press('Escape');
      }
    });

    cell(S.capRefused, async () => {
      if (!session) throw new Error('not signed in (the cap warning cell failed)');
      // $4.12 + $1.00: over the cap once this turn ends (it started at 82 %, so it is served).
      const [third] = await turn('Spend a little more', 'Third answer, the one that goes over.', 500_000);
      expect(third?.status).toBe(200);
      const upstreamBefore = env.stubs.anthropic.exchanges.length;
      const before = env.tap.exchanges.length;
      await session.tui.submit('One more, please');
      // The gateway's message as it is (Claude Code wraps it at the pane's width): the cap, the reset, what to do.
      const tomorrow = new Date(midnightUtc() * 1000).toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
      const screen = await session.tui.waitFor(new RegExp(`● Your daily spend limit \\(\\$5\\.00\\) on this gateway is reached · resets ${tomorrow}, 00:00 UTC · ask your gateway admin\\s+to raise it`));
      const refused = turns(before);
      expect(refused.map((exchange) => exchange.status)).toEqual([429]);
      expect(JSON.parse(refused[0]!.response)).toMatchObject({ type: 'error', error: { type: 'billing_error' } });
      expect(refused[0]?.responseHeaders).toMatchObject({ 'x-should-retry': 'false', 'anthropic-ratelimit-unified-status': 'rejected', 'anthropic-ratelimit-unified-overage-period': 'daily' });
      // Nothing reached the upstream, and Claude Code did not retry.
      expect(env.stubs.anthropic.exchanges.length).toBe(upstreamBefore);
      expect(screen.slice(screen.lastIndexOf('One more, please'))).not.toMatch(/Hello from the messages stub|API Error/);
      expect(env.gateway.logs).toContainEqual(expect.objectContaining({ msg: 'request', route: 'messages', model: CLAUDE_MODEL, sub: ALICE.sub, status: 429 }));
    });
  });
});
