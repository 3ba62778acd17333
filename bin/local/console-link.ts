import { join } from 'node:path';
import type { ConsoleRole, ConsoleSessions } from '../../lambda/admin/console-sessions.ts';
import type { AuditLog } from '../../lambda/identity/store/audit.ts';
import { writeOwnerOnly } from './first-key.ts';

/** Where npm start leaves its console link when its output is a log, not a terminal. */
export const CONSOLE_LINK_FILE = 'console-link.txt';

/**
 * A one-time console sign-in link (docs/console.md, "Signing in"): works once, for 10 minutes.
 * Audited as made, by whom.
 */
export async function makeConsoleLink(sessions: ConsoleSessions, audit: AuditLog | undefined, gatewayUrl: string, role: ConsoleRole, createdBy: string, now = Date.now()): Promise<{ url: string; expiresAt: string }> {
  const { token, expiresAt } = await sessions.createLink(role, createdBy, now);
  await audit?.record({ type: 'console_link_created', role, actor: createdBy, via: createdBy }, now);
  return { url: `${gatewayUrl.replace(/\/+$/, '')}/admin/login/link?token=${token}`, expiresAt: new Date(expiresAt * 1000).toISOString() };
}

/**
 * What npm start says about the console. The link signs its holder in as an admin, so it goes
 * where the first key goes (first-key.ts): to the terminal, or, when the output is a log
 * (journald, a container's log, a file), to a file of the data folder only this user can read.
 */
export function consoleLinkNotice(out: { isTTY?: boolean }, dataDir: string, consoleUrl: string, link: { url: string; expiresAt: string }): string {
  const again = 'a new one: npm run keys -- console-link';
  if (out.isTTY) return `  Console:   ${consoleUrl}  (sign in once, within 10 minutes, with ${link.url} ; later, ${again})`;
  const path = join(dataDir, CONSOLE_LINK_FILE);
  writeOwnerOnly(path, `One-time sign-in link of the gateway console (works once, until ${link.expiresAt}):\n\n${link.url}\n`);
  return `  Console:   ${consoleUrl}  (a one-time sign-in link, valid 10 minutes, is in ${path}; later, ${again})`;
}
