import { generateApiKey, generateKeyId, hashApiKey } from './key-material.ts';
import type { KeyLimits, KeyRecord } from './key-table.ts';

export interface KeyRequest {
  name: string;
  models?: string[];
  /** Epoch seconds. */
  expiresAt?: number;
  limits?: KeyLimits;
  /** Rotation: issue under an existing public id, so the identity and its usage carry over. */
  id?: string;
  /** The person (IdP `sub`) the key belongs to. */
  owner?: string;
  /** Admin API automation (docs/admin-api.md): `admin` may change things, `viewer` only read. */
  role?: 'admin' | 'viewer';
}

export interface IssuedKey {
  /** The secret itself: shown once, never stored. */
  key: string;
  record: KeyRecord;
}

/** Mints a key and the record to store for it (the digest, never the key). */
export function mintKey(request: KeyRequest, now = new Date()): IssuedKey {
  const key = generateApiKey();
  const record: KeyRecord = {
    keyHash: hashApiKey(key),
    id: request.id ?? generateKeyId(),
    name: request.name,
    createdAt: now.toISOString(),
    revoked: false,
  };
  if (request.models !== undefined) record.models = request.models;
  if (request.expiresAt !== undefined) record.expiresAt = request.expiresAt;
  if (request.limits !== undefined && Object.keys(request.limits).length > 0) record.limits = request.limits;
  if (request.owner !== undefined) record.owner = request.owner;
  if (request.role !== undefined) record.role = request.role;
  return { key, record };
}
