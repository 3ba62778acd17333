import Anthropic from '@anthropic-ai/sdk';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { approveSignIn, launchBrowser, type TestBrowser } from '../support/browser.ts';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.ts';
import { eventually, runKeys, startDevServer, tempDir, type DevServer } from '../support/processes.ts';
import { ALICE } from '../support/sign-in-gateway.ts';
import { poll, refresh, startDeviceFlow } from '../support/sign-in.ts';

/**
 * `npm start` with a config that has `identity`, end to end: the real server process, the test
 * IdP, Chromium on the verification page and the IdP's form, the key CLI managing people while
 * the server runs.
 */
describe('npm start with sign-in', () => {
  const dataDir = tempDir('gateway-sign-in-');
  const env: Record<string, string> = { GATEWAY_DATA_DIR: dataDir, GATEWAY_KEY_CACHE_SECONDS: '0', GATEWAY_SESSION_CACHE_SECONDS: '0' };
  let idp: TestIdp;
  let browser: TestBrowser;
  let server: DevServer | undefined;

  beforeAll(async () => {
    idp = await startTestIdp({ users: [ALICE] });
    const config = {
      upstreams: { sim: { type: 'simulator' } },
      routes: [{ model: '*', upstream: 'sim' }],
      identity: { issuer: idp.issuer, clientId: idp.clientId, clientSecretEnv: 'IDP_CLIENT_SECRET', authorizationParams: { prompt: 'consent' }, loginNotice: 'Example Corp accounts only.' },
    };
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify(config));
    Object.assign(env, { GATEWAY_CONFIG: join(dataDir, 'config.json'), IDP_CLIENT_SECRET: idp.clientSecret as string });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await server?.stop();
    await browser.close();
    await idp.close();
  });

  test('a developer signs in with the browser, works with the token, and an operator ends their access', async () => {
    server = await startDevServer(env);
    const url = server.url;
    await idp.allowRedirect(`${url}/oauth/callback`);
    expect(server.output()).toContain(`Sign-in:   ${url}/device with ${idp.issuer} (register the redirect URI ${url}/oauth/callback there)`);
    const secretFile = join(dataDir, 'identity-secret.json');
    expect(statSync(secretFile).mode & 0o777).toBe(0o600);
    const tokenKey = JSON.parse(readFileSync(secretFile, 'utf8')).tokenKey;

    // Metadata names the address the server listens on, whatever Host the client sent.
    const metadata = (await (await fetch(`${url}/first/.well-known/oauth-authorization-server`, { headers: { host: 'gw.example.com' } })).json()) as Record<string, string>;
    expect(metadata.token_endpoint).toBe(`${url}/oauth/token`);

    const device = await startDeviceFlow(url);
    expect(device.login_notice).toBe('Example Corp accounts only.');
    await approveSignIn(browser, device.verification_uri_complete, ALICE);
    const tokens = (await poll(url, device.device_code)).body;
    expect(tokens.email).toBe(ALICE.email);

    const claude = new Anthropic({ baseURL: `${url}/first`, authToken: tokens.access_token as string, apiKey: null, maxRetries: 0 });
    const message = await claude.messages.create({ model: 'claude-sonnet-5', max_tokens: 20, messages: [{ role: 'user', content: 'Say hi' }] });
    expect(message.type).toBe('message');
    await eventually(() => expect(server?.output()).toMatch(/"msg":"request".*"sub":"alice".*"status":200/));

    const people = await runKeys(['people', 'list', '--json'], env);
    expect(people.code).toBe(0);
    expect(JSON.parse(people.stdout)).toEqual([expect.objectContaining({ sub: ALICE.sub, email: ALICE.email, groups: ALICE.groups, activeSessions: 1, sessions: [expect.objectContaining({ surface: 'claude_code', ip: '127.0.0.1' })] })]);
    const text = await runKeys(['people', 'list'], env);
    expect(text.stdout).toContain(`${ALICE.email}  ${ALICE.sub}  [engineering]`);

    const created = await runKeys(['create', '--name', 'alice-ci', '--owner', ALICE.email, '--json', '--url', url], env);
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout);
    expect(key.owner).toBe(ALICE.sub);
    const ci = new Anthropic({ baseURL: `${url}/first`, apiKey: key.key, maxRetries: 0 });
    await ci.messages.create({ model: 'claude-sonnet-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
    await eventually(() => expect(server?.output()).toMatch(new RegExp(`"keyId":"${key.id}","sub":"alice"`)));
    const nobody = await runKeys(['create', '--name', 'x', '--owner', 'nobody@example.com'], env);
    expect(nobody.code).toBe(2);
    expect(nobody.stderr).toContain('Nobody with the email or subject "nobody@example.com" has signed in');

    const revoked = await runKeys(['people', 'revoke', ALICE.email, '--json'], env);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ sub: ALICE.sub, sessionsEnded: [expect.stringMatching(/^ses_/)], keysRevoked: [key.id] });
    await expect(claude.messages.create({ model: 'claude-sonnet-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 401 });
    await expect(ci.messages.create({ model: 'claude-sonnet-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 401 });
    expect(await refresh(url, tokens.refresh_token as string)).toMatchObject({ status: 401, body: { error: 'invalid_grant' } });
    expect(JSON.parse((await runKeys(['people', 'list', '--json'], env)).stdout)[0].activeSessions).toBe(0);

    const output = server.output();
    for (const secret of [tokens.access_token, tokens.refresh_token, device.device_code, key.key, tokenKey, idp.clientSecret]) expect(output).not.toContain(secret as string);
    await server.stop();
    server = undefined;

    // The secret is created once and kept across restarts.
    server = await startDevServer(env);
    expect(JSON.parse(readFileSync(secretFile, 'utf8')).tokenKey).toBe(tokenKey);
  });

  test('a client secret the config names but the environment lacks stops the start, saying which', async () => {
    const { IDP_CLIENT_SECRET: _unset, ...without } = env;
    await expect(startDevServer({ ...without, GATEWAY_DATA_DIR: tempDir('gateway-sign-in-') })).rejects.toThrow("The config's identity.clientSecretEnv names IDP_CLIENT_SECRET: set it to the IdP client secret");
  });
});
