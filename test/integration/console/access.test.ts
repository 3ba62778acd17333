import { startGateway, type Harness } from '../../support/gateway-harness.ts';
import { adminCall, consoleLink, cookieOf, postLink, signInWithLink } from '../../support/console.ts';
import { CONTENT_SECURITY_POLICY } from '../../../lambda/admin/http.ts';

/**
 * Who may use the console and its API: one-time links (single use, 10 minutes), the session
 * cookie's attributes, CSRF on every change, viewers, Bearer admin keys, and the headers every
 * answer carries. The refusals are tested as carefully as the successes.
 */
const CONFIG = { upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }] };

describe('console access', () => {
  let gateway: Harness;
  let offset = 0;
  beforeAll(async () => {
    gateway = await startGateway({ config: CONFIG, admin: { now: () => Date.now() + offset } });
  });
  afterAll(() => gateway.close());
  afterEach(() => void (offset = 0));

  test('a one-time link shows a button, signs in once with a POST, and the cookie is HttpOnly, SameSite=Strict, not Secure on loopback http', async () => {
    const link = await consoleLink(gateway);
    // Opening the link (a mail scanner, a chat preview) uses nothing.
    for (let i = 0; i < 2; i++) {
      const page = await fetch(link);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<form method="post" action="/admin/login/link">');
    }
    const first = await postLink(link);
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/admin');
    const setCookie = first.headers.getSetCookie().find((line) => line.startsWith('gw_console=')) as string;
    expect(setCookie).toMatch(/; Max-Age=43200; Path=\/; HttpOnly; SameSite=Strict$/);
    expect(setCookie).not.toMatch(/Secure/);
    const session = await adminCall(gateway.url, 'GET', '/session', { cookie: cookieOf(first) });
    expect(session.status).toBe(200);
    expect(session.body).toMatchObject({ role: 'admin', via: 'session', actor: { label: 'one-time link' }, csrfToken: expect.stringMatching(/^[\w-]{43}$/) });

    const again = await postLink(link);
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('expired or was already used');
    expect(again.headers.getSetCookie()).toEqual([]);
  });

  test('a link expires after 10 minutes', async () => {
    const link = await consoleLink(gateway);
    offset = 10 * 60_000 + 1_000;
    const late = await postLink(link);
    expect(late.status).toBe(400);
    expect(late.headers.getSetCookie()).toEqual([]);
  });

  test('a link posted from another site is refused and stays unused', async () => {
    const link = await consoleLink(gateway);
    const forged = await postLink(link, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
    expect(forged.status).toBe(403);
    expect((await postLink(link)).status).toBe(303);
  });

  test('a session ends after 12 hours, and at sign-out (its cookie then opens nothing)', async () => {
    const session = await signInWithLink(gateway);
    offset = 12 * 3600_000 + 1_000;
    expect((await adminCall(gateway.url, 'GET', '/session', { session })).status).toBe(401);
    offset = 0;
    const out = await adminCall(gateway.url, 'POST', '/logout', { session });
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie()[0]).toMatch(/^gw_console=; Max-Age=0/);
    expect((await adminCall(gateway.url, 'GET', '/session', { session })).status).toBe(401);
  });

  test('every API call without a credential is 401, whatever the path', async () => {
    for (const [method, path] of [['GET', '/overview'], ['GET', '/keys'], ['POST', '/keys'], ['GET', '/nowhere'], ['DELETE', '/keys/key_1'], ['GET', '/session']]) {
      const answer = await adminCall(gateway.url, method as string, path as string, method === 'POST' ? { body: { name: 'x' } } : {});
      expect([path, answer.status]).toEqual([path, 401]);
      expect(answer.body).toMatchObject({ error: { code: 'not_signed_in' } });
    }
    expect((await adminCall(gateway.url, 'GET', '/overview', { cookie: 'gw_console=not-a-session-cookie-at-all-xxxxxxxxxxxxxxxxx' })).status).toBe(401);
  });

  test('a change needs the session CSRF token and a same-origin request; with both it is made', async () => {
    const session = await signInWithLink(gateway);
    const create = (headers: Record<string, string>) => adminCall(gateway.url, 'POST', '/keys', { cookie: session.cookie, body: { name: 'csrf-test' }, headers });
    const sameOrigin = { origin: gateway.url, 'sec-fetch-site': 'same-origin' };
    const refusals = [
      await create(sameOrigin),
      await create({ ...sameOrigin, 'x-csrf-token': 'A'.repeat(43) }),
      await create({ 'x-csrf-token': session.csrf, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }),
      await create({ 'x-csrf-token': session.csrf, 'sec-fetch-site': 'same-site' }),
      // No browser header at all: the Origin must be this gateway's.
      await create({ 'x-csrf-token': session.csrf, origin: 'http://127.0.0.1:1' }),
      await create({ 'x-csrf-token': session.csrf }),
    ];
    for (const answer of refusals) expect([answer.status, (answer.body as { error: { code: string } }).error.code]).toEqual([403, 'csrf_failed']);
    expect((await gateway.store.list()).filter((key) => key.name === 'csrf-test')).toEqual([]);
    expect((await create({ ...sameOrigin, 'x-csrf-token': session.csrf })).status).toBe(201);
    expect((await create({ origin: gateway.url, 'x-csrf-token': session.csrf })).status).toBe(201);
  });

  test('a viewer reads and changes nothing', async () => {
    const viewer = await signInWithLink(gateway, 'viewer');
    expect((await adminCall(gateway.url, 'GET', '/keys', { session: viewer })).status).toBe(200);
    const [key] = await gateway.store.list();
    for (const [method, path] of [['POST', '/keys'], ['PATCH', `/keys/${key?.id}`], ['POST', `/keys/${key?.id}/revoke`], ['POST', `/keys/${key?.id}/rotate`]]) {
      const answer = await adminCall(gateway.url, method as string, path as string, { session: viewer, body: { name: 'viewer-made' } });
      expect([path, answer.status, (answer.body as { error: { code: string } }).error.code]).toEqual([path, 403, 'admin_role_required']);
    }
    expect((await gateway.store.list()).some((record) => record.name === 'viewer-made' || record.revoked)).toBe(false);
    // Signing out is the viewer's own business.
    expect((await adminCall(gateway.url, 'POST', '/logout', { session: viewer })).status).toBe(200);
  });

  test('Bearer: an admin key changes, a viewer key reads, a key without a role or a revoked one is refused', async () => {
    const admin = await gateway.issueKey({ name: 'automation', role: 'admin' });
    const viewer = await gateway.issueKey({ name: 'dashboards', role: 'viewer' });
    const plain = await gateway.issueKey({ name: 'client' });
    const made = await adminCall(gateway.url, 'POST', '/keys', { bearer: admin.key, body: { name: 'made-by-automation' } });
    expect(made.status).toBe(201);
    expect((await adminCall(gateway.url, 'GET', '/keys', { bearer: viewer.key })).status).toBe(200);
    const viewerChange = await adminCall(gateway.url, 'POST', '/keys', { bearer: viewer.key, body: { name: 'no' } });
    expect([viewerChange.status, (viewerChange.body as { error: { code: string } }).error.code]).toEqual([403, 'admin_role_required']);
    const plainRead = await adminCall(gateway.url, 'GET', '/keys', { bearer: plain.key });
    expect([plainRead.status, (plainRead.body as { error: { code: string } }).error.code]).toEqual([403, 'role_required']);
    await gateway.store.revoke((await gateway.store.findById(admin.id))?.keyHash as string);
    expect((await adminCall(gateway.url, 'GET', '/keys', { bearer: admin.key })).status).toBe(401);
    expect((await adminCall(gateway.url, 'GET', '/keys', { bearer: 'sk-ant-not-ours' })).status).toBe(401);
    // A Bearer call needs no CSRF token (a browser never sends one by itself), and a cookie beside it changes nothing.
    const audit = await adminCall(gateway.url, 'GET', `/audit`, { bearer: viewer.key });
    expect((audit.body as { events: { type: string; actor: string; key: string }[] }).events).toContainEqual(expect.objectContaining({ type: 'key_created', actor: `key ${admin.id}`, via: 'admin API' }));
  });

  test('every answer carries the security headers and never a CORS header; the page and its assets too', async () => {
    const session = await signInWithLink(gateway);
    const answers = [
      (await fetch(`${gateway.url}/admin`, { headers: { origin: 'https://evil.example' } })).headers,
      (await adminCall(gateway.url, 'GET', '/overview', { session, headers: { origin: 'https://evil.example' } })).headers,
      (await adminCall(gateway.url, 'GET', '/overview', { headers: { origin: 'https://evil.example' } })).headers,
      (await fetch(await consoleLink(gateway))).headers,
    ];
    for (const headers of answers) {
      expect(headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(headers.get('x-frame-options')).toBe('DENY');
      expect(headers.get('x-content-type-options')).toBe('nosniff');
      expect(headers.get('referrer-policy')).toBe('no-referrer');
      expect([...headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
    }
    const preflight = await fetch(`${gateway.url}/admin/api/keys`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    expect([...preflight.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
  });

  test('the page is served gzipped with no-store; hashed assets for a year; unknown assets are 404', async () => {
    const page = await fetch(`${gateway.url}/admin`, { headers: { 'accept-encoding': 'gzip' } });
    expect(page.headers.get('content-encoding')).toBe('gzip');
    expect(page.headers.get('cache-control')).toBe('no-store');
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(html).not.toMatch(/<style|style=/);
    const js = /src="(\/admin\/assets\/app-[A-Z0-9]{8}\.js)"/.exec(html)?.[1] as string;
    const asset = await fetch(`${gateway.url}${js}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await fetch(`${gateway.url}/admin/assets/app-AAAAAAAA.js`)).status).toBe(404);
    expect((await fetch(`${gateway.url}/admin/assets/%2e%2e/manifest.json`)).status).toBe(404);
    expect((await fetch(`${gateway.url}/admin/manifest.json`)).status).toBe(404);
    expect((await fetch(`${gateway.url}/admin`, { method: 'POST', headers: { 'content-length': '0' } })).status).toBe(405);
  });

  test('bodies over 16 KiB are refused before anyone is asked who they are', async () => {
    const session = await signInWithLink(gateway);
    const answer = await adminCall(gateway.url, 'POST', '/keys', { session, body: { name: 'x'.repeat(17 * 1024) } });
    expect(answer.status).toBe(413);
  });

  test('unknown endpoints and methods are 404 and 405, bad input 400 with the field', async () => {
    const session = await signInWithLink(gateway);
    expect((await adminCall(gateway.url, 'GET', '/nowhere', { session })).status).toBe(404);
    const wrongMethod = await adminCall(gateway.url, 'DELETE', '/keys', { session });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET, POST');
    const bad = await adminCall(gateway.url, 'POST', '/keys', { session, body: { name: 'x', limits: { requestsPerMinute: -1 } } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { type: 'invalid_request_error', param: 'limits.requestsPerMinute' } });
    const unknownField = await adminCall(gateway.url, 'POST', '/keys', { session, body: { name: 'x', admin: true } });
    expect(unknownField.status).toBe(400);
    const notJson = await fetch(`${gateway.url}/admin/api/keys`, { method: 'POST', body: 'name=x', headers: { cookie: session.cookie, 'x-csrf-token': session.csrf, 'sec-fetch-site': 'same-origin', 'content-type': 'text/plain' } });
    expect(notJson.status).toBe(415);
    expect((await adminCall(gateway.url, 'GET', '/usage?metric=secrets', { session })).status).toBe(400);
    expect((await adminCall(gateway.url, 'GET', '/keys?cursor=not-ours', { session })).status).toBe(400);
    expect((await adminCall(gateway.url, 'GET', '/audit?cursor=bm9wZQ', { session })).status).toBe(400);
  });
});
