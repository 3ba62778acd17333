import { createHash, timingSafeEqual } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';

/**
 * What keeps the embedded store to the gateway and its CLI. dynalite checks no signature and
 * answers any Origin with `access-control-allow-origin: *`, so on its own any local user, and any
 * web page open in a browser on the machine, could put a key or erase a key's spend. Each run of
 * the store has a secret (256 random bits) that is the first segment of its endpoint's path: the
 * gateway and the CLI hold the endpoint (the CLI reads it from the data folder's lock record,
 * mode 0600, in a folder of mode 0700), nobody else can guess it. A request that names the
 * wrong secret, comes from a browser (an Origin or a Fetch Metadata header) or names a host other
 * than a loopback address (DNS rebinding) is refused before dynalite sees it, so no CORS header
 * is ever sent.
 */
export function storeRequestAllowed(req: IncomingMessage, secret: string): boolean {
  const headers = req.headers;
  if (headers.origin !== undefined || headers['sec-fetch-site'] !== undefined || headers['sec-fetch-mode'] !== undefined) return false;
  // A loopback address, whatever the port (a TCP proxy in front is fine); a DNS name is a rebinding page's.
  if (!LOOPBACK_HOST.test(headers.host ?? '')) return false;
  const path = (req.url ?? '').split('?', 1)[0] as string;
  return sameSecret(path.replace(/^\/|\/$/g, ''), secret);
}

const LOOPBACK_HOST = /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/i;

/** The refusal: DynamoDB's error shape, no CORS header, the connection closed. */
export function refuseStoreRequest(res: ServerResponse): void {
  const body = JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#AccessDeniedException', message: 'This store answers only the gateway process that started it and its key CLI.' });
  res.writeHead(403, { 'content-type': 'application/x-amz-json-1.0', 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.end(body);
}

/** Constant-time comparison of digests (so neither content nor length leaks through timing). */
function sameSecret(presented: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

/**
 * The store's folder is the owner's only: 0700, files 0600. Applied at every start, so a folder
 * written by an older version (with the umask's 0755/0644) is closed too. New files get the
 * process's umask, which the entry points set to 0077.
 */
export function privateFolder(path: string): void {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  const close = (entry: string) => {
    const stats = lstatSync(entry);
    if (stats.isSymbolicLink()) return;
    if (stats.isDirectory()) {
      chmodSync(entry, 0o700);
      for (const name of readdirSync(entry)) close(join(entry, name));
    } else chmodSync(entry, 0o600);
  };
  close(path);
}
