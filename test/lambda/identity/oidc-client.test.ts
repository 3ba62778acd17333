import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import { IdpError, OidcRelyingParty } from '../../../lambda/identity/oidc-client.ts';
import { startTestIdp, type TestIdp } from '../../support/oidc-idp.ts';

/** The relying party against a real OpenID provider: what it accepts from an ID token, and what it refuses. */
describe('OIDC relying party', () => {
  let idp: TestIdp;
  let rp: OidcRelyingParty;
  const config = (issuer: string, clientId: string) => ({ issuer, clientId, scopes: ['openid'], groupsClaim: 'groups', emailClaim: 'email' });

  beforeAll(async () => {
    idp = await startTestIdp();
    rp = new OidcRelyingParty(config(idp.issuer, idp.clientId), async () => idp.clientSecret);
  });
  afterAll(() => idp.close());

  const refusal = (promise: Promise<unknown>) => promise.then(() => 'accepted', (error: unknown) => (error instanceof IdpError ? error.kind : `other: ${String(error)}`));

  test('a valid ID token: the person, and whether the groups claim was there', async () => {
    const token = await idp.signIdToken({ sub: 'u1', nonce: 'n1', email: 'u1@example.com', groups: ['eng'], name: 'U' });
    expect(await rp.identify(token, { nonce: 'n1' })).toEqual({ person: { sub: 'u1', email: 'u1@example.com', name: 'U', groups: ['eng'] }, groupsClaimed: true });
    expect((await rp.identify(await idp.signIdToken({ sub: 'u1' }), { sub: 'u1' })).groupsClaimed).toBe(false);
  });

  test('refused: another nonce, audience, issuer, subject; expired; no subject; signed by another key; unsigned', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(await refusal(rp.identify(await idp.signIdToken({ sub: 'u1', nonce: 'other' }), { nonce: 'n1' }))).toBe('invalid');
    expect(await refusal(rp.identify(await idp.signIdToken({ sub: 'u1' }), { nonce: 'n1' }))).toBe('invalid');
    expect(await refusal(rp.identify(await idp.signIdToken({ sub: 'u1', aud: 'someone-else' }), {}))).toBe('invalid');
    expect(await refusal(rp.identify(await idp.signIdToken({ sub: 'u1', aud: [idp.clientId, 'other'], azp: 'other' }), {}))).toBe('invalid');
    expect(await refusal(rp.identify(await idp.signIdToken({ sub: 'u1', iss: 'https://evil.example' }), {}))).toBe('invalid');
    expect(await refusal(rp.identify(await idp.signIdToken({ sub: 'u2' }), { sub: 'u1' }))).toBe('invalid');
    expect(await refusal(rp.identify(await idp.signIdToken({ sub: 'u1', exp: now - 3600, iat: now - 7200 }), {}))).toBe('invalid');
    expect(await refusal(rp.identify(await idp.signIdToken({}), {}))).toBe('invalid');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const forged = await new SignJWT({ iss: idp.issuer, aud: idp.clientId, sub: 'u1', iat: now, exp: now + 300 }).setProtectedHeader({ alg: 'RS256', kid: 'test-key' }).sign(privateKey);
    expect(await refusal(rp.identify(forged, {}))).toBe('invalid');
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ iss: idp.issuer, aud: idp.clientId, sub: 'u1', iat: now, exp: now + 300 })).toString('base64url')}.`;
    expect(await refusal(rp.identify(unsigned, {}))).toBe('invalid');
  });

  test('the discovery document and keys are fetched once and kept across calls (and instances)', async () => {
    const before = { discovery: idp.calls.get('.well-known') ?? 0, jwks: idp.calls.get('jwks') ?? 0 };
    const again = new OidcRelyingParty(config(idp.issuer, idp.clientId), async () => idp.clientSecret);
    for (let i = 0; i < 3; i++) await again.identify(await idp.signIdToken({ sub: `u${i}` }), {});
    await again.authorizationUrl({ redirectUri: 'http://127.0.0.1/cb', state: 's', nonce: 'n', challenge: 'c' });
    expect(idp.calls.get('.well-known') ?? 0).toBe(before.discovery);
    expect(idp.calls.get('jwks') ?? 0).toBe(before.jwks);
  });

  test('an IdP that takes too long is unavailable within the timeout; one whose discovery names another issuer is refused', async () => {
    const hanging = http.createServer((req, res) => {
      if (req.url?.includes('/.well-known/')) {
        const base = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ issuer: req.url.includes('other') ? 'https://other.example' : base, authorization_endpoint: `${base}/auth`, token_endpoint: `${base}/token`, jwks_uri: `${base}/jwks` }));
      }
      // The token endpoint never answers.
    });
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
    try {
      const slow = new OidcRelyingParty(config(base, 'c'), async () => 's', { discoveryMs: 500, tokenMs: 300 });
      const started = Date.now();
      expect(await refusal(slow.refresh('r'))).toBe('unavailable');
      // Within the 300 ms given, not the 10 s default; the bound leaves a loaded machine room.
      expect(Date.now() - started).toBeLessThan(5_000);
      const other = new OidcRelyingParty(config(`${base}/other`, 'c'), async () => 's', { discoveryMs: 500, tokenMs: 300 });
      await expect(other.authorizationUrl({ redirectUri: 'x', state: 's', nonce: 'n', challenge: 'c' })).rejects.toThrow('names another issuer');
    } finally {
      hanging.closeAllConnections();
      await new Promise((resolve) => hanging.close(resolve));
    }
  });

  test('the authorization URL: PKCE S256, state, nonce; extra parameters cannot replace them', async () => {
    const withExtras = new OidcRelyingParty({ ...config(idp.issuer, idp.clientId), authorizationParams: { prompt: 'consent', state: 'evil', redirect_uri: 'https://evil.example' } }, async () => undefined);
    const url = await withExtras.authorizationUrl({ redirectUri: 'http://127.0.0.1:1/oauth/callback', state: 'S', nonce: 'N', challenge: 'C' });
    expect(Object.fromEntries(url.searchParams)).toEqual({ prompt: 'consent', state: 'S', redirect_uri: 'http://127.0.0.1:1/oauth/callback', response_type: 'code', client_id: idp.clientId, scope: 'openid', nonce: 'N', code_challenge: 'C', code_challenge_method: 'S256' });
  });
});
