import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import tls from 'node:tls';
import { installHelper, nthOpenedLink, runHelper } from '../support/login-helper.ts';
import { ALICE, BOB, messagesWith } from '../support/sign-in-gateway.ts';
import { refresh } from '../support/sign-in.ts';
import { CLAUDE, claudeEnv, runClaude } from './clis.ts';
import { CellBook } from './conformance.ts';
import { assertIsolated } from './isolation.ts';
import { CLAUDE_ROUTES } from './routes.ts';
import { claudeDollars, claudeHome, exchangesTo, lastTokens, signIn, startClaude, waitForExchange, type ClaudeSession } from './sign-in-claude-tui.ts';
import { CLAUDE_MODEL, CLAUDE_SMALL_MODEL, startSignInEnvironment, type SignInEnvironment } from './sign-in-environment.ts';
import { CLAUDE_SIGN_IN as S, signInCells } from './sign-in-scenarios.ts';
import type { TapExchange } from './tap.ts';

/**
 * Claude Code signing in to the gateway with its own /login (the TUI, driven through tmux), as
 * the gateway protocol describes it, and Claude Code with the login helper as its apiKeyHelper.
 * The gateway is reached over https, as /login needs it deployed: a TLS front on loopback (a
 * private address) with a certificate from a test CA the CLIs trust (NODE_EXTRA_CA_CERTS, as a
 * company's CA is installed on its machines). The cells run in order on one environment: sign
 * in, a turn, /usage, /logout; another person signed in and removed at the IdP; the helper.
 */
const book = new CellBook('claude-code', CLAUDE.name, CLAUDE.version);
const CELL_TIMEOUT_MS = 150_000;
let env: SignInEnvironment;

beforeAll(async () => {
  assertIsolated();
  // 5-minute tokens: Claude Code refreshes when less than 5 minutes are left, so before each request.
  env = await startSignInEnvironment('claude-sign-in', { accessTokenMinutes: 5 }, { https: true });
}, 90_000);

afterAll(async () => {
  await session?.tui.close();
  await env?.close();
});

let session: ClaudeSession | undefined;

/** The SHA-256 fingerprint (lowercase hex) of the leaf certificate an https origin serves. */
function leafFingerprint(origin: string): Promise<string> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: hostname, port: Number(port), ca: readFileSync(env.caFile as string) }, () => {
      resolve(socket.getPeerCertificate().fingerprint256.replace(/:/g, '').toLowerCase());
      socket.end();
    });
    socket.on('error', reject);
  });
}

function credentials(home: string): { gatewayTrust?: Record<string, string>; enterpriseGateway?: { url: string; jwt: string; idpRefreshToken?: string; email?: string; revocationEndpoint?: string } } {
  return JSON.parse(readFileSync(join(home, '.claude', '.credentials.json'), 'utf8'));
}

describe(book.title, () => {
  signInCells(CLAUDE_ROUTES, (route) => {
    const cell = (scenario: (typeof S)[keyof typeof S], fn: () => Promise<void>) => book.cell(route, scenario, 'anthropic', fn, CELL_TIMEOUT_MS);

    cell(S.login, async () => {
      env.tap.reset();
      session = await startClaude(env);
      const { code, link, page, screens } = await signIn(env, session, ALICE);
      expect(screens[0]).toContain(`Gateway:  ${env.url}/first`);
      // First contact: the fingerprint shown is that of the certificate the gateway's host serves.
      expect(screens[1]).toContain(`Certificate fingerprint (SHA-256): ${(await leafFingerprint(env.url)).slice(0, 16)}…`);
      expect(screens[2]).toContain(`${env.url}/device`);
      expect(screens[2]).toContain('Sign in with your Example Corp account.');
      expect(link).toBe(`${env.url}/device?user_code=${code}`);
      expect(page).toContain(`You are signed in as ${ALICE.email}. Go back to Claude Code`);

      // On the wire, as the gateway protocol describes it.
      expect(exchangesTo(env, 'GET', '/first/.well-known/oauth-authorization-server').map((exchange) => exchange.status)).toContain(200);
      const [device] = exchangesTo(env, 'POST', '/oauth/device_authorization');
      expect(device).toMatchObject({ status: 200, body: 'surface=claude_code' });
      expect(device?.headers['user-agent']).toBe(`claude-code/${CLAUDE.version}`);
      const polls = exchangesTo(env, 'POST', '/oauth/token').filter((poll) => new URLSearchParams(poll.body).get('grant_type') === 'urn:ietf:params:oauth:grant-type:device_code');
      expect(polls.slice(0, -1).map((poll) => JSON.parse(poll.response).error)).toEqual(polls.slice(0, -1).map(() => 'authorization_pending'));
      expect(polls.at(-1)?.status).toBe(200);
      expect(JSON.parse(polls.at(-1)!.response)).toMatchObject({ token_type: 'Bearer', expires_in: 300, email: ALICE.email, access_token: expect.stringMatching(/^gwt_/), refresh_token: expect.stringMatching(/^gwr_/) });
      // What Claude Code keeps (the latest tokens: with 5-minute tokens it refreshes at once), the endpoints (same origin), the email confirmed.
      const tokens = lastTokens(env);
      expect(credentials(session.home).enterpriseGateway).toMatchObject({ url: `${env.url}/first`, jwt: tokens.access_token, idpRefreshToken: tokens.refresh_token, email: ALICE.email, revocationEndpoint: `${env.url}/oauth/revoke` });
      expect(env.gateway.logs).toContainEqual(expect.objectContaining({ msg: 'audit', type: 'sign_in', sub: ALICE.sub, surface: 'claude_code' }));
      // The certificate pinned for the host is the one it serves (the protocol's trust on first use).
      expect(credentials(session.home).gatewayTrust).toEqual({ '127.0.0.1': await leafFingerprint(env.url) });
    });

    cell(S.turn, async () => {
      if (!session) throw new Error('not signed in (the /login cell failed)');
      const before = env.tap.exchanges.length;
      env.stubs.anthropic.script({ text: 'Hello Alice, through the gateway.' });
      await session.tui.submit('Say hi');
      await session.tui.waitFor(/Hello Alice, through the gateway\./);
      // The refresh first (5-minute tokens), then the turn with the refreshed access token.
      const refreshes = exchangesTo(env, 'POST', '/oauth/token', before);
      expect(refreshes.length).toBeGreaterThan(0);
      expect(refreshes.map((exchange) => [new URLSearchParams(exchange.body).get('grant_type'), exchange.status])).toEqual(refreshes.map(() => ['refresh_token', 200]));
      const turn = exchangesTo(env, 'POST', '/first/v1/messages', before).filter((exchange) => JSON.parse(exchange.body).model === CLAUDE_MODEL);
      expect(turn.map((exchange) => exchange.status)).toEqual([200]);
      expect(turn[0]?.headers.authorization).toBe(`Bearer ${lastTokens(env).access_token}`);
      expect(env.gateway.logs).toContainEqual(expect.objectContaining({ msg: 'request', route: 'messages', model: CLAUDE_MODEL, sub: ALICE.sub, status: 200 }));
      expect(credentials(session.home).enterpriseGateway?.jwt).toBe(lastTokens(env).access_token);
    });

    cell(S.usage, async () => {
      if (!session) throw new Error('not signed in (the /login cell failed)');
      const before = env.tap.exchanges.length;
      await session.tui.submit('/usage');
      // The Usage tab: this session's cost from Claude Code's own count, whatever the gateway says.
      const screen = await session.tui.waitFor(new RegExp(`Usage by model:\\s+${CLAUDE_MODEL}:`));
      expect(screen).toMatch(/Estimated cost:\s+\$\d/);
      // Signed in to a gateway, Claude Code asks it for the person's spend, with the session's bearer.
      const asked = await waitForExchange(env, 'GET', '/first/api/oauth/usage', before);
      expect(asked.headers.authorization).toBe(`Bearer ${lastTokens(env).access_token}`);
      // Alice has no cap: no limits, and her spend in cents for the UTC day, week and month,
      // which Claude Code shows as dollars beside the session's cost.
      expect(asked.status).toBe(200);
      expect(asked.responseHeaders['cache-control']).toBe('no-store');
      const usage = JSON.parse(asked.response) as { limits: unknown[]; extra_usage: { monthly_limit: null; used_credits: number; daily: { used_credits: number }; weekly: { used_credits: number } } };
      expect(usage).toMatchObject({ limits: [], extra_usage: { is_enabled: true, monthly_limit: null, utilization: null, currency: 'USD', daily: { limit: null }, weekly: { limit: null } } });
      const [day, week, month] = claudeDollars(usage.extra_usage.daily.used_credits, usage.extra_usage.weekly.used_credits, usage.extra_usage.used_credits);
      await session.tui.waitFor(new RegExp(`Spend \\(UTC\\)\\s+${day} today · ${week} this week · ${month} this month`));
      expect(await session.tui.capture()).not.toMatch(/API Error|Failed to load usage/i);
      await session.tui.press('Escape');
    });

    cell(S.logout, async () => {
      if (!session) throw new Error('not signed in (the /login cell failed)');
      const { access_token: access, refresh_token: refreshToken } = lastTokens(env);
      const before = env.tap.exchanges.length;
      await session.tui.submit('/logout');
      await session.tui.waitFor(/Successfully logged out/);
      // Claude Code sends the two revocations side by side: the tap records them in whichever order they end.
      const revocations = exchangesTo(env, 'POST', '/oauth/revoke', before);
      expect(revocations.map((exchange) => [Object.fromEntries(new URLSearchParams(exchange.body)), exchange.status])).toEqual(expect.arrayContaining([
        [{ token: access }, 200],
        [{ token: refreshToken, token_type_hint: 'refresh_token' }, 200],
      ]));
      expect(revocations).toHaveLength(2);
      // (The test's own requests go to the tap, behind the TLS front: the same gateway.)
      const refused = await messagesWith(env.tap.url, access);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('x-should-retry')).toBe('false');
      expect(JSON.parse(refused.body)).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
      expect(await refresh(env.tap.url, refreshToken)).toMatchObject({ status: 401, body: { error: 'invalid_grant' } });
      expect(env.gateway.logs).toContainEqual(expect.objectContaining({ msg: 'audit', type: 'session_revoked', sub: ALICE.sub, reason: 'sign_out' }));
      await session.tui.close();
      session = undefined;
    });

    cell(S.removed, async () => {
      session = await startClaude(env);
      await signIn(env, session, BOB);
      env.stubs.anthropic.script({ text: 'Hello Bob.' });
      await session.tui.submit('Say hi');
      await session.tui.waitFor(/Hello Bob\./);
      env.idp.removeUser(BOB.sub);
      const before = env.tap.exchanges.length;
      await session.tui.submit('Say hi again');
      const screen = await session.tui.waitFor(/Please run \/login · API Error: 401 Your sign-in has expired or was revoked/);
      expect(screen).not.toContain('Hello Bob.\n\n❯ Say hi again\n\n● Hello');
      expect(exchangesTo(env, 'POST', '/oauth/token', before).map((exchange) => [exchange.status, JSON.parse(exchange.response).error])).toEqual([[401, 'invalid_grant']]);
      const refused = exchangesTo(env, 'POST', '/first/v1/messages', before);
      expect(refused.map((exchange) => [exchange.status, exchange.responseHeaders['x-should-retry']])).toEqual([[401, 'false']]);
      expect(env.gateway.logs).toContainEqual(expect.objectContaining({ msg: 'audit', type: 'session_revoked', sub: BOB.sub, reason: 'idp_refused' }));
      await session.tui.close();
      session = undefined;
    });

    cell(S.helper, async () => {
      // Downloaded through the tap (the same bytes); signed in to the https origin, whose CA the machine trusts.
      const helper = await installHelper(env.tap.url, env.dir('helper'));
      const trustCa = { NODE_EXTRA_CA_CERTS: env.caFile as string };
      const login = runHelper(helper, [env.url], trustCa);
      await env.approve(await nthOpenedLink(helper, 1), ALICE);
      expect((await login).code).toBe(0);
      const token = (await runHelper(helper, ['token', env.url], trustCa)).stdout.trim();

      const { home, cwd } = claudeHome(env);
      mkdirSync(join(home, '.claude'), { recursive: true });
      // docs/sign-in.md, "Claude Code on a public URL", as written (the helper in ~/.local/bin).
      mkdirSync(join(home, '.local', 'bin'), { recursive: true });
      writeFileSync(join(home, '.local', 'bin', 'gateway-login'), readFileSync(join(helper.bin, 'gateway-login')), { mode: 0o755 });
      writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ apiKeyHelper: `~/.local/bin/gateway-login token ${env.url}`, env: { ANTHROPIC_BASE_URL: `${env.url}/first` } }));
      env.stubs.anthropic.script({ text: 'Hello from the helper run.' });
      const before = env.tap.exchanges.length;
      const run = await runClaude(['-p', 'Say hi', '--output-format', 'json'], {
        env: claudeEnv({}, home, {
          PATH: helper.path,
          XDG_CONFIG_HOME: helper.configHome,
          ...trustCa,
          ANTHROPIC_MODEL: CLAUDE_MODEL,
          ANTHROPIC_DEFAULT_HAIKU_MODEL: CLAUDE_SMALL_MODEL,
          // Model discovery: GET /first/v1/models with x-api-key alone (it needs nonessential traffic allowed).
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: undefined,
          CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY: '1',
        }),
        cwd,
        timeoutMs: 60_000,
      });
      expect(run.result?.result).toBe('Hello from the helper run.');
      const turn = exchangesTo(env, 'POST', '/first/v1/messages', before);
      expect(turn.map((exchange) => [exchange.status, exchange.headers.authorization, exchange.headers['x-api-key']])).toEqual([[200, `Bearer ${token}`, token]]);
      // Model discovery: Claude Code 2.1.332 sends the helper's output in both headers here too.
      // (The helper, asked again within a minute of the `token` above, first checks its token with
      // the same free request, under its own user agent.)
      const lists = exchangesTo(env, 'GET', '/first/v1/models', before);
      const byHelper = (exchange: TapExchange) => exchange.headers['user-agent']?.startsWith('gateway-login/') === true;
      expect(lists.filter((exchange) => !byHelper(exchange)).map((exchange) => [exchange.status, exchange.headers.authorization, exchange.headers['x-api-key']])).toEqual([[200, `Bearer ${token}`, token]]);
      expect(lists.filter(byHelper).map((exchange) => [exchange.status, exchange.headers.authorization])).toEqual([[200, `Bearer ${token}`]]);
      expect(env.gateway.logs).toContainEqual(expect.objectContaining({ msg: 'request', route: 'messages', sub: ALICE.sub, status: 200 }));
    });
  });
});
