import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { LIMIT_NAMES, type KeyLimits, type KeyRecord } from './key-table.ts';

/**
 * A key record as a DynamoDB item and back. Reading is strict: the gateway decides from these
 * attributes whether a key may be used and what it may do, so an attribute of the wrong type
 * (`revoked` as a string, `expiresAt` as a string, `models` as a string set, a limit as a
 * string, an unknown limit) is never read as "absent", which would make the key active and
 * unrestricted. Such a record comes back with `malformed` naming each bad attribute: the gateway
 * refuses the key (fail closed) and `keys list` flags it.
 */
export function toItem(record: KeyRecord): Record<string, AttributeValue> {
  const item: Record<string, AttributeValue> = {
    keyHash: { S: record.keyHash },
    id: { S: record.id },
    name: { S: record.name },
    createdAt: { S: record.createdAt },
    revoked: { BOOL: record.revoked },
  };
  if (record.expiresAt !== undefined) item.expiresAt = { N: String(record.expiresAt) };
  if (record.models !== undefined) item.models = { L: record.models.map((glob) => ({ S: glob })) };
  if (record.lastUsedAt !== undefined) item.lastUsedAt = { S: record.lastUsedAt };
  if (record.owner !== undefined) item.owner = { S: record.owner };
  if (record.role !== undefined) item.role = { S: record.role };
  if (record.limits !== undefined) {
    const limits = Object.entries(record.limits).filter(([, value]) => value !== undefined);
    item.limits = { M: Object.fromEntries(limits.map(([name, value]) => [name, { N: String(value) }])) };
  }
  return item;
}

/** The DynamoDB type an attribute value has (`S`, `N`, `BOOL`, `SS`...). */
function typeOf(value: AttributeValue): string {
  return Object.keys(value).find((type) => (value as unknown as Record<string, unknown>)[type] !== undefined) ?? 'nothing';
}

export function fromItem(item: Record<string, AttributeValue>): KeyRecord {
  const malformed: string[] = [];
  const wrong = (attribute: string, expected: string, value: AttributeValue) => malformed.push(`${attribute} (${expected} expected, ${typeOf(value)} found)`);
  const string = (attribute: string, required: boolean): string | undefined => {
    const value = item[attribute];
    if (value === undefined) {
      if (required) malformed.push(`${attribute} (missing)`);
      return undefined;
    }
    if (value.S === undefined) wrong(attribute, 'S', value);
    return value.S;
  };
  const record: KeyRecord = {
    keyHash: string('keyHash', true) ?? '',
    id: string('id', true) ?? '',
    name: string('name', false) ?? '',
    createdAt: string('createdAt', false) ?? '',
    revoked: false,
  };
  const { revoked, expiresAt, models, lastUsedAt, limits, owner, role } = item;
  if (revoked !== undefined) {
    if (revoked.BOOL === undefined) wrong('revoked', 'BOOL', revoked);
    record.revoked = revoked.BOOL ?? true;
  }
  if (expiresAt !== undefined) {
    const seconds = Number(expiresAt.N);
    if (expiresAt.N === undefined || !Number.isFinite(seconds)) wrong('expiresAt', 'N', expiresAt);
    // A malformed expiry is read as already past.
    record.expiresAt = Number.isFinite(seconds) ? seconds : 0;
  }
  if (models !== undefined) {
    const globs = models.L?.map((glob) => glob.S);
    if (globs === undefined || globs.some((glob) => glob === undefined)) wrong('models', 'L of S', models);
    // A malformed allowlist allows nothing.
    record.models = globs?.every((glob) => glob !== undefined) ? globs : [];
  }
  if (lastUsedAt !== undefined) record.lastUsedAt = string('lastUsedAt', false);
  if (owner !== undefined) record.owner = string('owner', false);
  if (role !== undefined) {
    // A role grants the admin API: only the two known values are read as one.
    if (role.S !== 'admin' && role.S !== 'viewer') malformed.push(`role ("admin" or "viewer" expected, ${role.S === undefined ? typeOf(role) : JSON.stringify(role.S)} found)`);
    else record.role = role.S;
  }
  if (limits !== undefined) record.limits = limitsOf(limits, malformed, wrong);
  if (malformed.length > 0) record.malformed = malformed;
  return record;
}

function limitsOf(value: AttributeValue, malformed: string[], wrong: (attribute: string, expected: string, value: AttributeValue) => void): KeyLimits {
  const limits: KeyLimits = {};
  if (value.M === undefined) {
    wrong('limits', 'M', value);
    return limits;
  }
  for (const [name, limit] of Object.entries(value.M)) {
    if (!(LIMIT_NAMES as readonly string[]).includes(name)) {
      malformed.push(`limits.${name} (not a limit this gateway knows)`);
      continue;
    }
    const number = Number(limit.N);
    if (limit.N === undefined || !Number.isFinite(number)) wrong(`limits.${name}`, 'N', limit);
    else limits[name as keyof KeyLimits] = number;
  }
  return limits;
}
