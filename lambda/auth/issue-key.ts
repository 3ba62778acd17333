import { generateApiKey, generateKeyId, hashApiKey } from './key-material.ts';
import type { KeyRecord } from './key-table.ts';

export interface KeyRequest {
  name: string;
  models?: string[];
  /** Epoch seconds. */
  expiresAt?: number;
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
    id: generateKeyId(),
    name: request.name,
    createdAt: now.toISOString(),
    revoked: false,
  };
  if (request.models !== undefined) record.models = request.models;
  if (request.expiresAt !== undefined) record.expiresAt = request.expiresAt;
  return { key, record };
}
