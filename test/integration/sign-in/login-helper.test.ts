import { existsSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { generateAccessToken } from '../../../lambda/auth/key-material.ts';
import { startGateway } from '../../support/gateway-harness.ts';
import { installHelper, nthOpenedLink, openedLinks, runHelper, type HelperHome } from '../../support/login-helper.ts';
import { tempDir } from '../../support/processes.ts';
import { messagesWith, startSignInGateway, ALICE, type SignInSetup } from '../../support/sign-in-gateway.ts';
import { approveInBrowser, refresh, ScriptedBrowser } from '../../support/sign-in.ts';
import type { TestUser } from '../../support/oidc-idp.ts';

/**
 * The login helper (lambda/identity/gateway-login.mjs), run as a developer runs it: downloaded
 * from the gateway, executed by the oldest Node here, against the real gateway and IdP, its
 * browser a script that writes down the link (the person's part is the scripted browser; the
 * pages themselves are tested in Chromium in browser.test.ts). Codex and Claude Code run it in
 * the client suite (test/clients/sign-in-*.test.ts).
 */
const CAROL: TestUser = { sub: 'carol', password: 'carol-password', email: 'carol@example.com', groups: ['engineering'] };
const HELPER_SOURCE = new URL('../../../lambda/identity/gateway-login.mjs', import.meta.url);

interface State {
  gateway: string;
  tokenEndpoint: string;
  accessToken: string;
  refreshToken?: string;
  expiresAt: number;
  refreshAt: number;
  email?: string;
}

let setup: SignInSetup;
let url: string;
let alice: HelperHome;

beforeAll(async () => {
  setup = await startSignInGateway({ identity: { loginNotice: 'Example Corp accounts only.' } });
  setup.idp.addUser(CAROL);
  url = setup.gateway.url;
  alice = await installHelper(url, tempDir('gateway-helper-alice-'));
}, 60_000);

afterAll(() => setup?.close());

const stateOf = (home: HelperHome): State => JSON.parse(readFileSync(home.stateFile(url), 'utf8')) as State;
const writeState = (home: HelperHome, state: State) => writeFileSync(home.stateFile(url), JSON.stringify(state));
/** The sign-in room's requests (token, revoke...) the gateway logged so far. */
const identityRequests = () => setup.gateway.logs.filter((line) => line.msg === 'request' && line.route === 'identity').length;

/** `gateway-login <url>` with the person's part done in the scripted browser. */
async function signIn(home: HelperHome, user: TestUser | 'cancel') {
  const run = runHelper(home, [url]);
  const link = await nthOpenedLink(home, openedLinks(home).length + 1);
  const userCode = new URL(link).searchParams.get('user_code') as string;
  const page = await approveInBrowser(new ScriptedBrowser(), url, userCode, user);
  return { ...(await run), link, userCode, page: page.text };
}

test('served at /login/helper.mjs as the repository has it, to anyone, cacheable and revalidated by its ETag', async () => {
  const response = await fetch(`${url}/login/helper.mjs`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  expect(response.headers.get('cache-control')).toBe('public, max-age=3600');
  expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  const body = await response.text();
  expect(body).toBe(readFileSync(HELPER_SOURCE, 'utf8'));
  expect(body.startsWith('#!/usr/bin/env node\n')).toBe(true);
  const etag = response.headers.get('etag') as string;
  const again = await fetch(`${url}/login/helper.mjs`, { headers: { 'if-none-match': etag } });
  expect(again.status).toBe(304);
  expect(await again.text()).toBe('');
  expect((await fetch(`${url}/login/helper.mjs`, { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
  expect((await fetch(`${url}/login/helper.mjs`, { method: 'POST', body: 'x' })).status).toBe(405);
});

test('signs in with the device flow: the link printed and opened in the browser, nothing on stdout, the sign-in readable by the user alone', async () => {
  const run = await signIn(alice, ALICE);
  expect(run.code).toBe(0);
  expect(run.stdout).toBe('');
  expect(run.link).toBe(`${url}/device?user_code=${run.userCode}`);
  expect(run.stderr).toContain(`To sign in to ${url}, open\n\n  ${run.link}\n\nand check that it shows the code ${run.userCode}.`);
  expect(run.stderr).toContain('Example Corp accounts only.');
  expect(run.stderr).toContain(`Signed in to ${url} as ${ALICE.email}.`);
  // The last page names the client, and does not offer the helper to someone using it.
  expect(run.page).toContain('Go back to gateway-login');
  expect(run.page).not.toContain('curl');
  expect(statSync(alice.stateFile(url)).mode & 0o777).toBe(0o600);
  expect(statSync(dirname(alice.stateFile(url))).mode & 0o777).toBe(0o700);
  const state = stateOf(alice);
  expect(state).toMatchObject({ gateway: url, tokenEndpoint: `${url}/oauth/token`, email: ALICE.email, accessToken: expect.stringMatching(/^gwt_/), refreshToken: expect.stringMatching(/^gwr_/) });
  // An hour's token, refreshed once less than 5 minutes are left.
  expect(state.expiresAt - state.refreshAt).toBe(5 * 60_000);
  // The gateway recorded who signed in with which client.
  expect(setup.gateway.logs).toContainEqual(expect.objectContaining({ msg: 'audit', type: 'sign_in', sub: ALICE.sub, surface: 'gateway_login' }));
}, 60_000);

test('token prints the access token and nothing else; the gateway takes it as a bearer on both formats and as x-api-key', async () => {
  const run = await runHelper(alice, ['token', url]);
  expect(run).toEqual({ code: 0, stdout: `${stateOf(alice).accessToken}\n`, stderr: '' });
  const token = run.stdout.trim();
  expect((await messagesWith(url, token)).status).toBe(200);
  const responses = await fetch(`${url}/second/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-5.5', input: 'hi' }) });
  expect(responses.status).toBe(200);
  // Claude Code sends an apiKeyHelper's output as x-api-key alone on its model list request.
  expect((await fetch(`${url}/first/v1/models`, { headers: { 'x-api-key': token } })).status).toBe(200);
  // The current Node too (the oldest one here ran above), with the same sign-in.
  const current = await installHelper(url, tempDir('gateway-helper-node-'), dirname(process.execPath));
  mkdirSync(dirname(current.stateFile(url)), { recursive: true });
  writeFileSync(current.stateFile(url), readFileSync(alice.stateFile(url)));
  expect(await runHelper(current, ['token', url])).toEqual(run);
});

test('a token with less than 5 minutes left is refreshed silently: a new token, the refresh token rotated', async () => {
  const before = stateOf(alice);
  writeState(alice, { ...before, refreshAt: Date.now() - 1, expiresAt: Date.now() + 4 * 60_000 });
  const run = await runHelper(alice, ['token', url]);
  expect(run.code).toBe(0);
  expect(run.stderr).toBe('');
  const after = stateOf(alice);
  expect(run.stdout).toBe(`${after.accessToken}\n`);
  expect(after.accessToken).not.toBe(before.accessToken);
  expect(after.refreshToken).not.toBe(before.refreshToken);
  expect(after.expiresAt).toBeGreaterThan(Date.now() + 55 * 60_000);
  expect((await messagesWith(url, after.accessToken)).status).toBe(200);
  expect(statSync(alice.stateFile(url)).mode & 0o777).toBe(0o600);
});

test('clients asking at once while a refresh is due: one refresh, the same new token for each', async () => {
  writeState(alice, { ...stateOf(alice), refreshAt: Date.now() - 1 });
  const before = identityRequests();
  const runs = await Promise.all([1, 2, 3].map(() => runHelper(alice, ['token', url])));
  expect(runs.map((run) => run.code)).toEqual([0, 0, 0]);
  expect(new Set(runs.map((run) => run.stdout)).size).toBe(1);
  expect(runs[0]?.stdout).toBe(`${stateOf(alice).accessToken}\n`);
  expect(identityRequests() - before).toBe(1);
  expect(existsSync(`${alice.stateFile(url)}.lock`)).toBe(false);
  expect(setup.gateway.logs.some((line) => line.type === 'refresh_reuse')).toBe(false);
});

test('asked again within a minute for a token the gateway refuses (a client recovering from a 401): checked, then refreshed', async () => {
  // A re-ask of a token the gateway takes changes nothing.
  const good = (await runHelper(alice, ['token', url])).stdout;
  const before = identityRequests();
  expect((await runHelper(alice, ['token', url])).stdout).toBe(good);
  expect(identityRequests()).toBe(before);

  // The kept token is one the gateway does not take (as after its store was restored from a backup).
  const stale = generateAccessToken();
  writeState(alice, { ...stateOf(alice), accessToken: stale });
  expect((await runHelper(alice, ['token', url])).stdout).toBe(`${stale}\n`);
  expect((await messagesWith(url, stale)).status).toBe(401);
  const recovered = await runHelper(alice, ['token', url]);
  expect(recovered.code).toBe(0);
  expect(recovered.stdout).not.toBe(`${stale}\n`);
  expect((await messagesWith(url, recovered.stdout.trim())).status).toBe(200);
});

test('the gateway unreachable when a refresh is due: the current token while it lasts, then one line saying so', async () => {
  const state = stateOf(alice);
  const unreachable = { ...state, tokenEndpoint: 'http://127.0.0.1:1/oauth/token', refreshAt: Date.now() - 1 };
  writeState(alice, unreachable);
  expect(await runHelper(alice, ['token', url])).toEqual({ code: 0, stdout: `${state.accessToken}\n`, stderr: '' });
  writeState(alice, { ...unreachable, expiresAt: Date.now() });
  const run = await runHelper(alice, ['token', url]);
  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(new RegExp(`^gateway-login: cannot refresh the sign-in to ${url} \\(.+\\); try again in a moment\\n$`));
  writeState(alice, state);
});

test('a lock left behind by a killed helper is taken over once stale', async () => {
  const lock = `${alice.stateFile(url)}.lock`;
  writeFileSync(lock, '');
  const minuteAgo = Date.now() / 1000 - 60;
  utimesSync(lock, minuteAgo, minuteAgo);
  const before = stateOf(alice);
  writeState(alice, { ...before, refreshAt: Date.now() - 1 });
  const run = await runHelper(alice, ['token', url]);
  expect(run.code).toBe(0);
  expect(run.stdout).not.toBe(`${before.accessToken}\n`);
  expect(existsSync(lock)).toBe(false);
});

test('a person removed at the IdP: token fails at the next refresh with one line saying to sign in again; the sign-in is forgotten', async () => {
  const carol = await installHelper(url, tempDir('gateway-helper-carol-'));
  expect((await signIn(carol, CAROL)).code).toBe(0);
  const { accessToken } = stateOf(carol);
  expect((await messagesWith(url, accessToken)).status).toBe(200);
  setup.idp.removeUser(CAROL.sub);
  writeState(carol, { ...stateOf(carol), refreshAt: Date.now() - 1 });
  const run = await runHelper(carol, ['token', url]);
  expect(run).toEqual({ code: 1, stdout: '', stderr: `gateway-login: your sign-in to ${url} has ended; sign in again with: gateway-login ${url}\n` });
  expect(existsSync(carol.stateFile(url))).toBe(false);
  // The gateway ended the session: the access token still held stops working too.
  expect((await messagesWith(url, accessToken)).status).toBe(401);
  expect(setup.gateway.logs).toContainEqual(expect.objectContaining({ msg: 'audit', type: 'session_revoked', sub: CAROL.sub, reason: 'idp_refused' }));
  expect(await runHelper(carol, ['token', url])).toMatchObject({ code: 1, stdout: '', stderr: `gateway-login: not signed in to ${url}; sign in with: gateway-login ${url}\n` });
}, 60_000);

test('logout revokes at the gateway (both tokens stop working at once) and forgets the sign-in', async () => {
  const { accessToken, refreshToken } = stateOf(alice);
  expect(await runHelper(alice, ['logout', url])).toEqual({ code: 0, stdout: '', stderr: `Signed out of ${url}.\n` });
  const refused = await messagesWith(url, accessToken);
  expect(refused.status).toBe(401);
  expect(refused.headers.get('x-should-retry')).toBe('false');
  expect(await refresh(url, refreshToken as string)).toMatchObject({ status: 401, body: { error: 'invalid_grant' } });
  expect(existsSync(alice.stateFile(url))).toBe(false);
  expect(await runHelper(alice, ['logout', url])).toEqual({ code: 0, stdout: '', stderr: `Not signed in to ${url}.\n` });
});

test('a sign-in cancelled at the IdP: the helper stops at once, saying so', async () => {
  const home = await installHelper(url, tempDir('gateway-helper-cancel-'));
  const run = await signIn(home, 'cancel');
  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(/gateway-login: the sign-in was denied in the browser\n$/);
  expect(existsSync(home.stateFile(url))).toBe(false);
}, 60_000);

test('refusals: plain http off loopback, unknown commands, a gateway without sign-in or not answering', async () => {
  expect(await runHelper(alice, ['token', 'http://10.1.2.3:8787'])).toEqual({ code: 1, stdout: '', stderr: 'gateway-login: http://10.1.2.3:8787: the gateway must be https (plain http only on this machine\'s loopback)\n' });
  expect(await runHelper(alice, ['frobnicate', url, 'x'])).toMatchObject({ code: 2, stdout: '' });
  expect(await runHelper(alice, [])).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('usage: gateway-login <host>') });
  const plain = await startGateway({ config: { upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }] } });
  try {
    expect(await runHelper(alice, [plain.url, '--no-browser'])).toEqual({ code: 1, stdout: '', stderr: `gateway-login: ${plain.url} does not offer sign-in (no OAuth metadata): ask its operator, or use a key\n` });
  } finally {
    await plain.close();
  }
  // Nothing answers there.
  expect(await runHelper(alice, ['http://127.0.0.1:1', '--no-browser'])).toMatchObject({ code: 1, stdout: '', stderr: expect.stringMatching(/^gateway-login: cannot reach http:\/\/127\.0\.0\.1:1: .+\n$/) });
});

test('no access or refresh token reached the gateway\'s logs', () => {
  expect(setup.gateway.rawLogs.join('\n')).not.toMatch(/gw[tr]_[A-Za-z0-9_-]{43}/);
});
