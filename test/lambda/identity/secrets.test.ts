import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { identityKeys, newTokenKey, secretFromFile, secretFromSecretsManager } from '../../../lambda/identity/secrets.ts';

test('sealed IdP refresh tokens open only with the same key and for the same session, and only unaltered', () => {
  const keys = identityKeys(newTokenKey());
  const sealed = keys.seal('idp-refresh-token', 'ses_1');
  expect(sealed).not.toContain('idp-refresh-token');
  expect(keys.seal('idp-refresh-token', 'ses_1')).not.toBe(sealed);
  expect(keys.open(sealed, 'ses_1')).toBe('idp-refresh-token');
  expect(keys.open(sealed, 'ses_2')).toBeUndefined();
  expect(identityKeys(newTokenKey()).open(sealed, 'ses_1')).toBeUndefined();
  const raw = Buffer.from(sealed.slice(3), 'base64url');
  raw[20] = (raw[20] as number) ^ 1;
  expect(keys.open(`v1.${raw.toString('base64url')}`, 'ses_1')).toBeUndefined();
  expect(keys.open('v1.short', 'ses_1')).toBeUndefined();
  expect(keys.open('plain', 'ses_1')).toBeUndefined();
});

test('MACs are per purpose and checked in constant time', () => {
  const keys = identityKeys(newTokenKey());
  const mac = keys.mac('csrf', 'cookie');
  expect(keys.verifyMac('csrf', 'cookie', mac)).toBe(true);
  expect(keys.verifyMac('ticket', 'cookie', mac)).toBe(false);
  expect(keys.verifyMac('csrf', 'other', mac)).toBe(false);
  expect(keys.verifyMac('csrf', 'cookie', undefined)).toBe(false);
  expect(keys.verifyMac('csrf', 'cookie', `${mac}x`)).toBe(false);
});

test('the secret from a file (npm start) or Secrets Manager (deployed), with the client secret from its env var or member', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'identity-secret-'));
  const tokenKey = newTokenKey();
  writeFileSync(join(dir, 'ok.json'), JSON.stringify({ tokenKey }));
  expect(await secretFromFile(join(dir, 'ok.json'), { IDP: 's3cret' }, 'IDP')()).toEqual({ tokenKey, clientSecret: 's3cret' });
  expect(await secretFromFile(join(dir, 'ok.json'), {}, undefined)()).toEqual({ tokenKey });
  writeFileSync(join(dir, 'short.json'), JSON.stringify({ tokenKey: 'short' }));
  await expect(secretFromFile(join(dir, 'short.json'), {}, undefined)()).rejects.toThrow('no tokenKey of at least 32 characters');
  await expect(secretFromFile(join(dir, 'missing.json'), {}, undefined)()).rejects.toThrow();
  const read = async (id: string) => (id === 'Identity' ? JSON.stringify({ tokenKey, IDP: 'from-secret' }) : undefined);
  expect(await secretFromSecretsManager(read, 'Identity', 'IDP')()).toEqual({ tokenKey, clientSecret: 'from-secret' });
  await expect(secretFromSecretsManager(read, 'Other', 'IDP')()).rejects.toThrow('has no string value');
  await expect(secretFromSecretsManager(async () => 'not json', 'Identity', undefined)()).rejects.toThrow('is not JSON');
  // A client secret the config names but nobody set.
  await expect(secretFromFile(join(dir, 'ok.json'), {}, 'IDP')()).rejects.toThrow('identity.clientSecretEnv names IDP, but that environment variable is empty or missing');
  await expect(secretFromSecretsManager(read, 'Identity', 'OTHER')()).rejects.toThrow('names OTHER, but that member of the secret Identity is empty or missing');
});
