import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateAccessToken } from '../../lambda/auth/key-material.ts';
import { installHelper, nthOpenedLink, runHelper, type HelperHome } from '../support/login-helper.ts';
import type { TestUser } from '../support/oidc-idp.ts';
import { ALICE, BOB } from '../support/sign-in-gateway.ts';
import { CODEX, CODEX_OFFLINE_TABLES, codexEnv, runCodex, type CodexResult } from './clis.ts';
import { CellBook } from './conformance.ts';
import { assertIsolated } from './isolation.ts';
import { CODEX_ROUTES } from './routes.ts';
import { CODEX_MODEL, startSignInEnvironment, type SignInEnvironment } from './sign-in-environment.ts';
import { CODEX_SIGN_IN as S, signInCells } from './sign-in-scenarios.ts';
import type { TapExchange } from './tap.ts';

/**
 * Codex with the login helper as its provider's auth command (docs/sign-in.md, "The login
 * helper"): the helper downloaded from the gateway and signed in once with the browser, then
 * `codex exec` runs `gateway-login token <host>` for its bearer.
 */
const book = new CellBook('codex', CODEX.name, CODEX.version);
const CELL_TIMEOUT_MS = 150_000;
let env: SignInEnvironment;

beforeAll(async () => {
  assertIsolated();
  env = await startSignInEnvironment('codex-sign-in');
}, 90_000);

afterAll(() => env?.close());

/** The helper, signed in as `user` (the device flow, the person's part in Chromium). */
async function signedInHelper(user: TestUser): Promise<HelperHome> {
  const helper = await installHelper(env.url, env.dir('helper'));
  const login = runHelper(helper, [env.url]);
  await env.approve(await nthOpenedLink(helper, 1), user);
  const run = await login;
  if (run.code !== 0) throw new Error(`gateway-login failed: ${run.stderr}`);
  return helper;
}

/** CODEX_HOME/config.toml: the provider block of docs/sign-in.md, with the tables that switch off every phone-home. */
function codexHome(helper: HelperHome): string {
  const home = env.dir('codex-home');
  writeFileSync(
    join(home, 'config.toml'),
    [
      'check_for_update_on_startup = false',
      `model = ${JSON.stringify(CODEX_MODEL)}`,
      // docs/sign-in.md, "Codex", as written (the helper's path in place of /home/you/.local/bin).
      'model_provider = "gateway"',
      '',
      '[model_providers.gateway]',
      'name = "gateway"',
      `base_url = ${JSON.stringify(`${env.url}/second/v1`)}`,
      'wire_api = "responses"',
      '',
      '[model_providers.gateway.auth]',
      `command = ${JSON.stringify(join(helper.bin, 'gateway-login'))}`,
      `args = ["token", ${JSON.stringify(env.url)}]`,
      'timeout_ms = 15000',
      '',
      ...CODEX_OFFLINE_TABLES,
      '',
    ].join('\n'),
  );
  return home;
}

function codex(helper: HelperHome, prompt: string): Promise<CodexResult> {
  const home = codexHome(helper);
  const base = codexEnv({}, home);
  return runCodex(['exec', '--json', '--skip-git-repo-check', prompt], { env: { ...base, PATH: `${base.PATH}:${helper.path}`, XDG_CONFIG_HOME: helper.configHome }, cwd: home, timeoutMs: 90_000 });
}

const exchangesTo = (method: string, path: string, from = 0): TapExchange[] => env.tap.exchanges.slice(from).filter((exchange) => exchange.method === method && exchange.url.split('?')[0] === path);
const stateOf = (helper: HelperHome) => JSON.parse(readFileSync(helper.stateFile(env.url), 'utf8')) as { accessToken: string; refreshAt: number };

describe(book.title, () => {
  signInCells(CODEX_ROUTES, (route) => {
    const cell = (scenario: (typeof S)[keyof typeof S], fn: () => Promise<void>) => book.cell(route, scenario, 'openai', fn, CELL_TIMEOUT_MS);

    cell(S.helperTurn, async () => {
      const helper = await signedInHelper(ALICE);
      const token = stateOf(helper).accessToken;
      env.stubs.openai.script({ text: 'Hello Alice, from the Responses stub.' });
      const before = env.tap.exchanges.length;
      const run = await codex(helper, 'Say hi');
      expect(run.messages).toEqual(['Hello Alice, from the Responses stub.']);
      expect(run.code).toBe(0);
      const catalog = exchangesTo('GET', '/second/v1/models', before);
      expect(catalog.length).toBeGreaterThan(0);
      expect(catalog.map((exchange) => [exchange.url, exchange.status, exchange.headers.authorization])).toEqual(catalog.map(() => [`/second/v1/models?client_version=${CODEX.version}`, 200, `Bearer ${token}`]));
      const turn = exchangesTo('POST', '/second/v1/responses', before);
      expect(turn.map((exchange) => [exchange.status, exchange.headers.authorization])).toEqual([[200, `Bearer ${token}`]]);
      expect(env.gateway.logs).toContainEqual(expect.objectContaining({ msg: 'request', route: 'responses', model: CODEX_MODEL, sub: ALICE.sub, status: 200 }));
    });

    cell(S.recovery, async () => {
      const helper = await signedInHelper(ALICE);
      // The kept token is one the gateway does not take (as after its store was restored from a backup).
      const stale = generateAccessToken();
      const state = stateOf(helper);
      writeFileSync(helper.stateFile(env.url), JSON.stringify({ ...state, accessToken: stale }));
      env.stubs.openai.script({ text: 'Served after the 401.' });
      const before = env.tap.exchanges.length;
      const run = await codex(helper, 'Say hi');
      expect(run.messages).toEqual(['Served after the 401.']);
      const fresh = stateOf(helper).accessToken;
      expect(fresh).not.toBe(stale);
      const sent = env.tap.exchanges.slice(before).filter((exchange) => exchange.url.startsWith('/second/'));
      expect(sent.filter((exchange) => exchange.headers.authorization === `Bearer ${stale}`).map((exchange) => exchange.status)).toContain(401);
      const turn = exchangesTo('POST', '/second/v1/responses', before).filter((exchange) => exchange.status === 200);
      expect(turn.map((exchange) => exchange.headers.authorization)).toEqual([`Bearer ${fresh}`]);
    });

    cell(S.removed, async () => {
      const helper = await signedInHelper(BOB);
      env.idp.removeUser(BOB.sub);
      // His token is due for a refresh (as an hour later).
      writeFileSync(helper.stateFile(env.url), JSON.stringify({ ...stateOf(helper), refreshAt: Date.now() - 1 }));
      env.stubs.openai.script({ text: 'Bob must not get this.' });
      const before = env.tap.exchanges.length;
      const run = await codex(helper, 'Say hi');
      expect(run.code).not.toBe(0);
      expect(run.messages).toEqual([]);
      expect(`${run.stdout}\n${run.stderr}`).toContain(`your sign-in to ${env.url} has ended; sign in again with: gateway-login ${env.url}`);
      // Codex 0.171 still sends the turn when its auth command fails, with no credential (and
      // retries it): each is refused 401 before any upstream, with x-should-retry: false.
      const turns = exchangesTo('POST', '/second/v1/responses', before);
      expect(turns.length).toBeGreaterThan(0);
      expect(turns.map((exchange) => [exchange.status, exchange.headers.authorization, exchange.responseHeaders['x-should-retry']])).toEqual(turns.map(() => [401, undefined, 'false']));
      expect(env.stubs.openai.creates()).toEqual([]);
      expect(env.gateway.logs).toContainEqual(expect.objectContaining({ msg: 'audit', type: 'session_revoked', sub: BOB.sub, reason: 'idp_refused' }));
    });
  });
});
