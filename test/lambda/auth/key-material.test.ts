import { presentedCredential } from '../../../lambda/auth/credential.ts';
import { generateAccessToken, generateApiKey, generateRefreshToken, hashApiKey, hashSecret, looksLikeAccessToken, looksLikeApiKey, looksLikeRefreshToken } from '../../../lambda/auth/key-material.ts';

test('a key is gwk_ + 256 random bits, the claude-gateway audience claims and a checksum', () => {
  const key = generateApiKey();
  const [secret, claims, check] = key.split('.');
  expect(secret).toMatch(/^gwk_[A-Za-z0-9_-]{43}$/);
  // What Claude Code decodes (without verifying) to decide that it talks to a gateway.
  expect(JSON.parse(Buffer.from(claims as string, 'base64url').toString('utf8'))).toEqual({ aud: 'claude-gateway' });
  expect(check).toMatch(/^[A-Za-z0-9_-]{8}$/);
  expect(looksLikeApiKey(key)).toBe(true);
  expect(new Set(Array.from({ length: 100 }, generateApiKey)).size).toBe(100);
});

test('a mistyped, truncated or altered key is refused without a lookup; keys of the older form stay valid', () => {
  const key = generateApiKey();
  const [secret, claims, check] = key.split('.') as [string, string, string];
  const flipped = `${secret.slice(0, 10)}${secret[10] === 'A' ? 'B' : 'A'}${secret.slice(11)}`;
  expect(looksLikeApiKey(`${flipped}.${claims}.${check}`)).toBe(false);
  expect(looksLikeApiKey(`${secret}.${claims}`)).toBe(false);
  expect(looksLikeApiKey(`${secret}.${Buffer.from('{"aud":"other"}').toString('base64url')}.${check}`)).toBe(false);
  expect(looksLikeApiKey(key.slice(0, -1))).toBe(false);
  expect(looksLikeApiKey(secret)).toBe(true);
  expect(looksLikeApiKey('sk-ant-api03-xyz')).toBe(false);
  expect(hashApiKey(key)).not.toBe(hashApiKey(secret));
});

test('sign-in tokens: access tokens in the keys\' shape (gwt_, audience, checksum), refresh tokens gwr_ and plain', () => {
  const access = generateAccessToken();
  expect(access).toMatch(/^gwt_[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{8}$/);
  expect(JSON.parse(Buffer.from(access.split('.')[1] as string, 'base64url').toString('utf8'))).toEqual({ aud: 'claude-gateway' });
  expect(looksLikeAccessToken(access)).toBe(true);
  expect(looksLikeAccessToken(`${access.slice(0, -1)}${access.endsWith('A') ? 'B' : 'A'}`)).toBe(false);
  expect(looksLikeApiKey(access)).toBe(false);
  expect(looksLikeAccessToken(generateApiKey())).toBe(false);
  const refresh = generateRefreshToken();
  expect(refresh).toMatch(/^gwr_[A-Za-z0-9_-]{43}$/);
  expect(looksLikeRefreshToken(refresh)).toBe(true);
  expect(looksLikeAccessToken(refresh)).toBe(false);
  expect(hashSecret(access)).toMatch(/^[0-9a-f]{64}$/);
});

test('presentedCredential: our key or sign-in token from the bearer or x-api-key, whichever has our format', () => {
  const key = generateApiKey();
  const token = generateAccessToken();
  expect(presentedCredential({ authorization: `Bearer ${token}` })).toEqual({ kind: 'session', value: token });
  expect(presentedCredential({ authorization: `Bearer ${key}` })).toEqual({ kind: 'key', value: key });
  expect(presentedCredential({ authorization: 'Bearer sk-ant-provider', 'x-api-key': token })).toEqual({ kind: 'session', value: token });
  expect(presentedCredential({ authorization: `Bearer ${token}`, 'x-api-key': key })).toEqual({ kind: 'session', value: token });
  // A refresh token is never a bearer.
  expect(presentedCredential({ authorization: `Bearer ${generateRefreshToken()}` })).toBeUndefined();
  expect(presentedCredential({})).toBeUndefined();
});
