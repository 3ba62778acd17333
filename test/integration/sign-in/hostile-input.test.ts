import { RawConnection, requestHead } from '../../chaos/support/raw-http.ts';
import { startSignInGateway, type SignInSetup } from '../../support/sign-in-gateway.ts';
import { enterCode, ScriptedBrowser, startDeviceFlow } from '../../support/sign-in.ts';

/** What strangers may send the unauthenticated sign-in endpoints, and what it costs: little. */
describe('sign-in endpoints under hostile input', () => {
  let setup: SignInSetup;
  afterEach(() => setup?.close());

  test('a body of unannounced length is refused (411); one announced over 16 KiB before a byte of it is read (413)', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const chunked = await RawConnection.open(url);
    await chunked.write(`${requestHead('POST', '/oauth/token', { 'content-type': 'application/x-www-form-urlencoded', 'transfer-encoding': 'chunked' })}17\r\ngrant_type=refresh_token\r\n0\r\n\r\n`);
    const refused = await chunked.response();
    expect(refused.status).toBe(411);
    expect(refused.json()).toMatchObject({ error: 'invalid_request' });
    chunked.destroy();
    await Promise.all(
      ['/oauth/device_authorization', '/device', '/oauth/revoke'].map(async (path) => {
        const huge = await RawConnection.open(url);
        await huge.write(requestHead('POST', path, { 'content-type': 'application/x-www-form-urlencoded', 'content-length': 50 * 1024 * 1024 }));
        expect((await huge.response()).status).toBe(413);
        // The body is never read: the connection is closed after the answer.
        expect(await huge.closesWithin(5_000)).toBe(true);
        huge.destroy();
      }),
    );
  });

  test('what a client says is shown escaped: surface, user agent, the code in the link; the login notice too', async () => {
    setup = await startSignInGateway({ identity: { loginNotice: 'Ask <b>#help</b> & "friends"' } });
    const url = setup.gateway.url;
    const response = await fetch(`${url}/oauth/device_authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': '<script>alert(1)</script>' },
      body: new URLSearchParams({ surface: '<img src=x onerror=alert(1)>' }),
    });
    const device = (await response.json()) as { user_code: string };
    const browser = new ScriptedBrowser();
    const form = await browser.get(`${url}/device?user_code=${encodeURIComponent('"><script>alert(1)</script>')}`);
    expect(form.text).not.toContain('<script>alert');
    expect(form.text).toContain('Ask &#60;b&#62;#help&#60;/b&#62; &#38; &#34;friends&#34;');
    const confirm = await enterCode(browser, url, device.user_code);
    expect(confirm.text).not.toMatch(/<script>|<img/);
    expect(confirm.text).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
    // An unrecognised surface is recorded as `unknown`, not refused.
    expect(confirm.text).toContain('unknown (as the client names itself)');
  });

  test('parameters repeated (an ambiguity another parser might read differently) are refused', async () => {
    setup = await startSignInGateway();
    const url = setup.gateway.url;
    const device = await startDeviceFlow(url);
    const response = await fetch(`${url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=urn:ietf:params:oauth:grant-type:device_code&device_code=${device.device_code}&device_code=other`,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_request' });
  });
});
