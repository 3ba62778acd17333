import type { AdminContext } from '../context.ts';
import { adminError } from '../http.ts';
import { auditTrail } from './audit.ts';
import { createKey, listKeys, revokeKey, rotateKey, updateKey } from './keys.ts';
import { overview } from './overview.ts';
import { listPeople, revokePerson, setPersonCaps, showPerson } from './people.ts';
import { session } from './session.ts';
import { upstreams } from './upstreams.ts';
import { usage } from './usage.ts';

/**
 * The admin API's endpoints (docs/admin-api.md lists each with who may call it and what it
 * costs). GET answers any role; every other method is a change: admins only, and with a console
 * session the CSRF token too (access.ts).
 */
type Run = (context: AdminContext, ...params: string[]) => unknown;

interface Entry {
  method: string;
  path: RegExp;
  run: Run;
}

const KEY_ID = '(key_[A-Za-z0-9_-]{1,64})';
const SUB = '([^/]{1,1024})';

const ENTRIES: Entry[] = [
  { method: 'GET', path: /^\/session$/, run: session },
  { method: 'GET', path: /^\/overview$/, run: overview },
  { method: 'GET', path: /^\/usage$/, run: usage },
  { method: 'GET', path: /^\/keys$/, run: listKeys },
  { method: 'POST', path: /^\/keys$/, run: createKey },
  { method: 'PATCH', path: new RegExp(`^/keys/${KEY_ID}$`), run: updateKey as Run },
  { method: 'POST', path: new RegExp(`^/keys/${KEY_ID}/rotate$`), run: rotateKey as Run },
  { method: 'POST', path: new RegExp(`^/keys/${KEY_ID}/revoke$`), run: revokeKey as Run },
  { method: 'GET', path: /^\/people$/, run: listPeople },
  { method: 'GET', path: new RegExp(`^/people/${SUB}$`), run: showPerson as Run },
  { method: 'PATCH', path: new RegExp(`^/people/${SUB}$`), run: setPersonCaps as Run },
  { method: 'POST', path: new RegExp(`^/people/${SUB}/revoke$`), run: revokePerson as Run },
  { method: 'GET', path: /^\/upstreams$/, run: upstreams },
  { method: 'GET', path: /^\/audit$/, run: auditTrail },
];

export interface ResolvedRoute {
  run: Run;
  params: string[];
  /** Not a read: admins only, CSRF-checked for console sessions. */
  change: boolean;
  /** POST /logout: any role may end their own session. */
  logout: boolean;
}

/** The endpoint for a method and a path under /admin/api, or a 404/405. */
export function apiRoute(method: string, path: string): ResolvedRoute {
  if (path === '/logout') {
    if (method !== 'POST') throw adminError.methodNotAllowed(method, ['POST']);
    return { run: () => undefined, params: [], change: true, logout: true };
  }
  const matching = ENTRIES.flatMap((entry) => {
    const match = entry.path.exec(path);
    return match ? [{ entry, match }] : [];
  });
  if (matching.length === 0) throw adminError.notFound('No such admin API endpoint (docs/admin-api.md lists them).');
  const found = matching.find(({ entry }) => entry.method === method || (method === 'HEAD' && entry.method === 'GET'));
  if (!found) throw adminError.methodNotAllowed(method, [...new Set(matching.map(({ entry }) => entry.method))]);
  let params: string[];
  try {
    params = found.match.slice(1).map((param) => decodeURIComponent(param));
  } catch {
    throw adminError.invalid('The path is not valid percent-encoding.');
  }
  return { run: found.entry.run, params, change: found.entry.method !== 'GET', logout: false };
}
