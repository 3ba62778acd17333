import { randomBytes } from 'node:crypto';
import { identityKeys } from '../identity-table.ts';
import { AUDIT_DAYS } from '../limits.ts';
import { epochSeconds, N, S, type IdentityTable, type Item } from './table.ts';

export type AuditType =
  /** A person signed in (device approved, or another room's sign-in). */
  | 'sign_in'
  /** A sign-in refused: the IdP said no, its answer failed verification, or the person is not in an allowed group. */
  | 'sign_in_refused'
  /** The person denied a device sign-in on the verification page. */
  | 'device_denied'
  /** A refresh refused (unknown, expired or revoked token; the IdP no longer vouches for the person) or not possible (IdP unreachable). */
  | 'refresh_failed'
  /** A refresh token used twice: its whole session was revoked. */
  | 'refresh_reuse'
  /** A session ended: sign-out (RFC 7009), an operator, or the IdP. */
  | 'session_revoked'
  /** An operator changed a person's own spend caps (`detail`: before and after). */
  | 'person_caps_changed'
  /** A request refused by a per-IP limit, a verification page post from another site, an unknown code: a log line only (below). */
  | 'request_refused'
  /** Key changes, from the key CLI or the console (lambda/auth/key-operations.ts). */
  | 'key_created'
  | 'key_updated'
  | 'key_rotated'
  | 'key_revoked'
  /** A one-time console sign-in link was made (`keys console-link`, npm start). */
  | 'console_link_created'
  /** A console session ended by its holder (sign-out). */
  | 'console_signed_out';

/**
 * What an audit event may say. Only identifiers and facts: never a token, code, cookie or IdP
 * answer (free text comes from the gateway's own fixed vocabulary, `reason`).
 */
export interface AuditEvent {
  type: AuditType;
  /** Who the event is about. */
  sub?: string;
  email?: string;
  /** Who did it, when not the person themselves (`operator`, an operator's sub). */
  actor?: string;
  ip?: string;
  surface?: string;
  /** The session (token family) id. */
  session?: string;
  reason?: string;
  /** The gateway's own explanation (an IdpError's message: error codes, never what the IdP sent). */
  detail?: string;
  /** Where the event came from (`/oauth/token`, `keys people revoke`...). */
  via?: string;
  /** The key an event is about (its public id). */
  key?: string;
  /** What the actor may do in the console (`admin`, `viewer`): sign-ins to the console. */
  role?: string;
}

/**
 * Audit events: one item in the identity table (`AUDIT#<day>`, kept AUDIT_DAYS) and one
 * structured log line each. A failed item write is logged, never fatal to the request.
 * `request_refused` events are log lines only: strangers can cause them without end (a refusal
 * is what they get once over a limit), and a stored one would be a write per request we pay for.
 */
const LOG_ONLY: ReadonlySet<AuditType> = new Set(['request_refused']);

export class AuditLog {
  readonly #table: IdentityTable;
  readonly #log: (line: string) => void;

  constructor(table: IdentityTable, log: (line: string) => void) {
    this.#table = table;
    this.#log = log;
  }

  async record(event: AuditEvent, nowMs: number): Promise<void> {
    const at = new Date(nowMs).toISOString();
    const fields = Object.fromEntries(Object.entries(event).filter(([, value]) => value !== undefined)) as Record<string, string>;
    const level = event.type === 'sign_in_refused' || event.type === 'refresh_failed' || event.type === 'refresh_reuse' || event.type === 'request_refused' || event.type === 'device_denied' ? 'warn' : 'info';
    this.#log(JSON.stringify({ timestamp: at, level, msg: 'audit', ...fields }));
    if (LOG_ONLY.has(event.type)) return;
    const item: Item = { at: S(at), expiresAt: N(epochSeconds(nowMs) + AUDIT_DAYS * 86_400) };
    for (const [name, value] of Object.entries(fields)) item[name] = S(value);
    try {
      await this.#table.put(identityKeys.audit(at.slice(0, 10)), `${at}#${randomBytes(4).toString('hex')}`, item);
    } catch (error) {
      this.#log(JSON.stringify({ timestamp: at, level: 'error', msg: 'audit write failed', type: event.type, cause: error instanceof Error ? error.message : String(error) }));
    }
  }

  /**
   * A page of one UTC day's events, newest first (one Query of at most `limit` items), and the
   * cursor of the next page (absent on the last). The console's audit view reads this.
   */
  async page(day: string, options: { limit: number; cursor?: string }): Promise<{ events: (AuditEvent & { at: string })[]; cursor?: string }> {
    const after = options.cursor === undefined ? undefined : Buffer.from(options.cursor, 'base64url').toString('utf8');
    if (after !== undefined && !/^\d{4}-\d{2}-\d{2}T[\d:.]+Z#[0-9a-f]{8}$/.test(after)) throw new RangeError('The cursor is not one this list gave.');
    const page = await this.#table.query(identityKeys.audit(day), { limit: options.limit, newestFirst: true, ...(after ? { after } : {}) });
    return { events: page.items.map(eventOf), ...(page.last ? { cursor: Buffer.from(page.last).toString('base64url') } : {}) };
  }

  /** The events of one UTC day, oldest first. */
  async day(day: string): Promise<(AuditEvent & { at: string })[]> {
    const items = await this.#table.partition(identityKeys.audit(day));
    return items.map(eventOf);
  }
}

function eventOf(item: Item): AuditEvent & { at: string } {
  const event = Object.fromEntries(Object.entries(item).flatMap(([name, value]) => (['pk', 'sk', 'expiresAt'].includes(name) || value.S === undefined ? [] : [[name, value.S]])));
  return event as unknown as AuditEvent & { at: string };
}
