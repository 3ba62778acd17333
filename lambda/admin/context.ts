import type { DynamoKeyStore } from '../auth/key-store.ts';
import type { IdentityConfig } from '../config/identity-schema.ts';
import type { Router } from '../config/routing.ts';
import type { IdentityOperations } from '../identity/operators.ts';
import type { AuditEvent, AuditLog } from '../identity/store/audit.ts';
import type { UpstreamHealth } from '../upstream/upstream-health.ts';
import type { Rollups } from '../usage/rollups.ts';
import type { DynamoUsageStore } from '../usage/usage-store.ts';
import type { Dimension } from '../usage/stats-table.ts';
import type { Caller } from './access.ts';
import type { AdminRequest } from './http.ts';

/** What every admin API endpoint gets: the request, who calls, and the stores of an operator. */
export interface AdminContext {
  request: AdminRequest;
  caller: Caller;
  now(): number;
  keys: DynamoKeyStore;
  /** The usage rollups (absent without a stats table: the usage views say so). */
  rollups: Rollups | undefined;
  /** The usage table's per-account day items (a person's spend against their caps), absent without one. */
  usage: Pick<DynamoUsageStore, 'days'> | undefined;
  /** The stats table, for group pools' spend. */
  stats: { tableName: string; read: (groups: readonly string[], at: Date) => Promise<Map<string, { day: number; week: number; month: number }>> } | undefined;
  /** People and audit (absent without an identity table). */
  people: IdentityOperations | undefined;
  audit: AuditLog | undefined;
  identityConfig: IdentityConfig | undefined;
  router: Router;
  health: UpstreamHealth;
  /** When this instance started (epoch ms): the per-instance views say since when they count. */
  startedAt: number;
  /** How long gateway instances trust a key they looked up (a revocation reaches them within it). */
  keyCacheSeconds: number;
  labels: Labels;
  /** Records an audit event of this caller's change (who and from where added). */
  record(event: Omit<AuditEvent, 'actor' | 'ip' | 'via'>): Promise<void>;
}

/** What an endpoint answers: a body (200), or a status with a body. */
export type ApiAnswer = unknown;
export class Created {
  readonly body: unknown;
  constructor(body: unknown) {
    this.body = body;
  }
}

/** How long a looked-up label (a key's name, a person's email) is reused. */
const LABEL_TTL_MS = 5 * 60_000;
const MAX_LABELS = 10_000;

/**
 * Display names for dimension values: a key id's name, a person's email (else name), bounded
 * to the values a view shows (top N). Cached per instance for five minutes; a value that cannot
 * be labelled is shown as itself.
 */
export class Labels {
  readonly #keys: Pick<DynamoKeyStore, 'findAllById'>;
  readonly #people: IdentityOperations | undefined;
  readonly #cache = new Map<string, { label: string; until: number }>();

  constructor(keys: Pick<DynamoKeyStore, 'findAllById'>, people: IdentityOperations | undefined) {
    this.#keys = keys;
    this.#people = people;
  }

  /** Labels of `values` of a dimension (reads: a key costs a Query and a GetItem, a person a GetItem, each at most every five minutes). */
  async of(dimension: Dimension, values: readonly string[], now = Date.now()): Promise<Map<string, string>> {
    const labels = new Map<string, string>();
    if (dimension !== 'key' && dimension !== 'person') return labels;
    await Promise.all(
      values.map(async (value) => {
        const id = `${dimension}\u0000${value}`;
        const cached = this.#cache.get(id);
        if (cached && cached.until > now) return void labels.set(value, cached.label);
        const label = await this.#lookUp(dimension, value).catch(() => undefined);
        if (label === undefined) return;
        if (this.#cache.size >= MAX_LABELS) this.#cache.clear();
        this.#cache.set(id, { label, until: now + LABEL_TTL_MS });
        labels.set(value, label);
      }),
    );
    return labels;
  }

  async #lookUp(dimension: 'key' | 'person', value: string): Promise<string | undefined> {
    if (dimension === 'key') return (await this.#keys.findAllById(value)).at(-1)?.name;
    const person = await this.#people?.people.get(value);
    return person?.email ?? person?.name;
  }
}
