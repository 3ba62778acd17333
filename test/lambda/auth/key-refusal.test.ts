import { presentedCredential } from '../../../lambda/auth/credential.ts';
import { generateAccessToken, generateApiKey } from '../../../lambda/auth/key-material.ts';
import { keyRefusal, missingCredential } from '../../../lambda/auth/key-refusal.ts';

const key = generateApiKey();

describe('what a request presents, and why it is not a credential of ours', () => {
  test.each([
    ['a Bearer token', { authorization: `Bearer ${key}` }],
    ['any case of "Bearer"', { authorization: `bearer ${key}` }],
    ['x-api-key', { 'x-api-key': key }],
    ['our key in x-api-key beside a provider key as Bearer', { authorization: 'Bearer sk-ant-provider', 'x-api-key': key }],
    ['our key as Bearer beside a provider key in x-api-key', { authorization: `Bearer ${key}`, 'x-api-key': 'sk-provider' }],
  ])('%s: the key', (_name, headers) => {
    expect(presentedCredential(headers)).toEqual({ kind: 'key', value: key });
  });

  test.each([
    ['nothing', {}, 'missing'],
    ['an empty x-api-key', { 'x-api-key': ' ' }, 'missing'],
    ['a key without "Bearer"', { authorization: key }, 'not_bearer'],
    ['Basic credentials', { authorization: 'Basic dXNlcjpwYXNz' }, 'not_bearer'],
    ['a provider key', { authorization: 'Bearer sk-proj-abc' }, 'not_issued'],
    ['a key cut short, beside a provider key', { authorization: 'Bearer sk-proj-abc', 'x-api-key': key.slice(0, -1) }, 'damaged'],
    ['a sign-in token cut short', { authorization: `Bearer ${generateAccessToken().slice(0, 40)}` }, 'damaged'],
  ])('%s: %s', (_name, headers, problem) => {
    expect(presentedCredential(headers)).toBeUndefined();
    expect(missingCredential(headers)).toBe(problem);
  });
});

test('every refusal is a final 401 whose message never names the x-api-key header', () => {
  for (const problem of ['missing', 'not_bearer', 'not_issued', 'damaged', 'unknown', 'revoked', 'expired', 'unusable'] as const) {
    const error = keyRefusal(problem, { id: 'key_0123456789abcdef', expiresAt: 1_800_000_000 });
    expect(error).toMatchObject({ status: 401, headers: { 'x-should-retry': 'false' } });
    expect(error.message).not.toMatch(/x-api-key/i);
  }
  expect(keyRefusal('expired', { id: 'key_0123456789abcdef', expiresAt: 1_800_000_000 }).message).toBe("Key key_0123456789abcdef expired at 2027-01-15T08:00:00.000Z; ask the gateway's operator for a new one.");
});
