import { codeChallenge, newSessionId, newUserCode, normalizeUserCode, randomSecret } from '../../../lambda/identity/codes.ts';

test('user codes: RFC 8628 §6.1 base-20 letters, XXXX-XXXX, every letter used, none favoured much', () => {
  const counts = new Map<string, number>();
  const codes = Array.from({ length: 5_000 }, newUserCode);
  for (const code of codes) {
    expect(code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    for (const letter of code.replace('-', '')) counts.set(letter, (counts.get(letter) ?? 0) + 1);
  }
  expect(counts.size).toBe(20);
  // 40,000 letters, 2,000 expected each: a biased modulo would skew the first letters by ~7 %.
  for (const count of counts.values()) expect(Math.abs(count - 2_000)).toBeLessThan(250);
  expect(new Set(codes).size).toBeGreaterThan(4_990);
});

test('typed codes are read as people type them: any case, spaces and dashes anywhere; anything else is no code', () => {
  expect(normalizeUserCode('wdjb-mjht')).toBe('WDJB-MJHT');
  expect(normalizeUserCode(' WD JB MJ HT ')).toBe('WDJB-MJHT');
  expect(normalizeUserCode('WDJBMJHT')).toBe('WDJB-MJHT');
  for (const bad of [undefined, '', 'WDJB-MJH', 'WDJB-MJHTX', 'AEIO-UAEI', 'WDJB-MJH1', 'x'.repeat(100)]) expect(normalizeUserCode(bad)).toBeUndefined();
});

test('secrets are 256 random bits; session ids are unguessable; PKCE S256 matches RFC 7636 appendix B', () => {
  const secret = randomSecret();
  expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
  expect(randomSecret()).not.toBe(secret);
  expect(newSessionId()).toMatch(/^ses_[A-Za-z0-9_-]{22}$/);
  expect(codeChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
});
