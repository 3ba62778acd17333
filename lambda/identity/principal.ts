import type { KeyRecord } from '../auth/key-table.ts';

/** A person the company's identity provider vouched for (at sign-in, and again at each refresh). */
export interface Person {
  /** The IdP's stable subject identifier (the ID token's `sub`). */
  sub: string;
  email?: string;
  name?: string;
  /** The IdP groups at the last sign-in or refresh (from the configured groups claim). */
  groups: string[];
}

/**
 * Who a request acts for, as authenticate resolved it. Either an issued key (which may be tied to
 * a person: `key.owner`) or a signed-in session; the middlewares read only this, never the
 * identity room's storage.
 */
export interface Principal {
  kind: 'key' | 'session';
  /** The issued key (kind 'key'). */
  key?: KeyRecord;
  /** The person: a signed-in session's, or the owner of a key tied to an identity. */
  person?: Person;
  /** The session family (kind 'session'): what /logout and "revoke sessions" end. */
  sessionId?: string;
}
