import { closeSync, fchmodSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const FIRST_KEY_FILE = 'first-key.txt';

/**
 * Hands the first key (and the client setup that contains it) to the person starting the
 * gateway, never to its log. On a terminal it is printed there. Otherwise stdout is a log (a
 * pipe to journald, a container's log, a file), so the key goes to a file of the data folder
 * that only this user can read, and stdout gets that file's path. Returns the lines for stdout.
 */
export function deliverFirstKey(out: { isTTY?: boolean }, dataDir: string, keyId: string, secretText: string): string {
  if (out.isTTY) return `\nCreated a first API key (${keyId}); it is shown only this once:\n\n${secretText}`;
  const path = join(dataDir, FIRST_KEY_FILE);
  writeOwnerOnly(path, `First API key of this gateway (${keyId}), with the setup of each client:\n\n${secretText}\n`);
  return `\nCreated a first API key (${keyId}). It is not printed here, as this output is not a terminal (a log):\nit is in ${path} (readable only by this user), with the setup of each client. Copy it from there, then delete the file.`;
}

/** Writes a secret to a file only this user can read (0600, also when a leftover of an earlier start is replaced). */
export function writeOwnerOnly(path: string, text: string): void {
  const fd = openSync(path, 'w', 0o600);
  try {
    fchmodSync(fd, 0o600);
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}
