import { startGateway, type Harness } from '../../support/gateway-harness.ts';
import { messagesWith, startSignInGateway, ALICE, type SignInSetup } from '../../support/sign-in-gateway.ts';
import { approveInBrowser, poll, ScriptedBrowser, signIn, startDeviceFlow, refresh, revoke } from '../../support/sign-in.ts';

/**
 * The DynamoDB-backed grant store under concurrency (two gateway instances on one table, as
 * Lambda instances are), and what the store and the logs hold: digests only, never a secret.
 */
describe('grant store', () => {
  let setup: SignInSetup;
  let other: Harness | undefined;
  afterEach(async () => {
    await other?.close();
    other = undefined;
    await setup?.close();
  });

  test('many concurrent polls of an approved grant, across two instances: exactly one gets the tokens', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    other = await startGateway({
      config: { upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }], identity: { issuer: setup.idp.issuer, clientId: setup.idp.clientId } },
      shareStoreWith: setup.gateway,
    });
    for (let round = 0; round < 3; round++) {
      const device = await startDeviceFlow(url);
      await approveInBrowser(new ScriptedBrowser(), url, device.user_code, ALICE);
      const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => poll(i % 2 === 0 ? url : (other as Harness).url, device.device_code)));
      const won = answers.filter((answer) => answer.status === 200);
      expect(won).toHaveLength(1);
      expect(answers.filter((answer) => answer.status === 400 && answer.body.error === 'invalid_grant')).toHaveLength(23);
      expect((await messagesWith((other as Harness).url, won[0]?.body.access_token as string)).status).toBe(200);
    }
  });

  test('concurrent approvals of one code (two browsers): one session, the other told it expired', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const device = await startDeviceFlow(url);
    const pages = await Promise.all([approveInBrowser(new ScriptedBrowser(), url, device.user_code, ALICE), approveInBrowser(new ScriptedBrowser(), url, device.user_code, ALICE)]);
    expect(pages.map((page) => page.status).sort()).toEqual([200, 400]);
    expect((await poll(url, device.device_code)).status).toBe(200);
    const sessions = setup.gateway.logs.filter((line) => line.msg === 'audit' && line.type === 'sign_in');
    expect(sessions).toHaveLength(1);
  });

  test('the identity table holds digests only: no code, token, state or IdP secret appears in it, nor in any log line', async () => {
    setup = await startSignInGateway({ identity: { loginNotice: 'notice' } });
    const url = setup.gateway.url;
    const secrets: string[] = [];
    const device = await startDeviceFlow(url);
    secrets.push(device.device_code, device.user_code, device.user_code.replace('-', ''));
    const browser = new ScriptedBrowser();
    const page = await approveInBrowser(browser, url, device.user_code, ALICE);
    expect(page.status).toBe(200);
    const tokens = (await poll(url, device.device_code)).body;
    secrets.push(tokens.access_token as string, tokens.refresh_token as string);
    const rotated = (await refresh(url, tokens.refresh_token as string)).body;
    secrets.push(rotated.access_token as string, rotated.refresh_token as string);
    const second = await signIn(url, ALICE);
    secrets.push(second.access_token as string, second.refresh_token as string);
    await revoke(url, rotated.access_token as string);
    // What the IdP handed the gateway (codes, its access and refresh tokens) and its client secret.
    secrets.push(...setup.idp.issuedSecrets(), setup.idp.clientSecret as string, setup.gateway.storeInfo.identitySecret.tokenKey);
    // Cookies the browser holds (CSRF, browser binding).
    for (const jar of browser.cookies.values()) for (const value of jar.values()) if (value.length >= 16) secrets.push(value);
    expect(setup.idp.issuedSecrets().length).toBeGreaterThanOrEqual(4);

    const { localDynamo } = await import('../../../bin/local/embedded-store.ts');
    const dynamo = localDynamo(setup.gateway.storeInfo.endpoint);
    const scan = await dynamo.call('Scan', { TableName: setup.gateway.storeInfo.identityTable });
    const stored = JSON.stringify(scan.Items);
    expect(scan.Items?.length).toBeGreaterThan(10);
    const logs = setup.gateway.rawLogs.join('\n');
    for (const secret of secrets) {
      expect(stored).not.toContain(secret);
      expect(logs).not.toContain(secret);
    }
    // Every kind of item has its expiry.
    for (const item of scan.Items ?? []) if (!item.pk?.S?.startsWith('PERSON')) expect(item.expiresAt?.N).toMatch(/^\d+$/);
  });
});
