import { chmodSync, openSync, statSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { newTokenKey } from '../../lambda/identity/secrets.ts';

/**
 * npm start's identity secret: `<dataDir>/identity-secret.json`, `{"tokenKey": "…"}`, created
 * once (readable by its owner only) and kept: replacing it makes every signed-in session's
 * next refresh fail (the IdP refresh tokens sealed with it can no longer be opened). The IdP
 * client secret is not in it: it comes from the environment variable `clientSecretEnv` names.
 */
export function ensureIdentitySecret(dataDir: string): string {
  const path = join(dataDir, 'identity-secret.json');
  try {
    // 'wx': created only when absent, so two starts never overwrite each other's key.
    const fd = openSync(path, 'wx', 0o600);
    writeSync(fd, `${JSON.stringify({ tokenKey: newTokenKey() })}\n`);
    closeSync(fd);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Kept private whatever happened to it since.
    if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  }
  return path;
}
