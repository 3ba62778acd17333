import { generateApiKey, hashApiKey, looksLikeApiKey } from '../../../lambda/auth/key-material.ts';

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
