import { fromItem, toItem } from '../../../lambda/auth/key-item.ts';
import type { KeyRecord } from '../../../lambda/auth/key-table.ts';

const complete: KeyRecord = {
  keyHash: 'a'.repeat(64),
  id: 'key_0123456789abcdef',
  name: 'alice',
  createdAt: '2026-11-01T00:00:00.000Z',
  revoked: false,
  expiresAt: 1_900_000_000,
  models: ['claude-*', 'gpt-5.5'],
  lastUsedAt: '2026-11-02T00:00:00.000Z',
  limits: { requestsPerMinute: 60, tokensPerDay: 1_000_000, tokensPerMonth: 9_000_000, maxOutputTokens: 8192, microUsdPerDay: 5_000_000, microUsdPerMonth: 90_000_000, maxInFlight: 4 },
  owner: 'idp|alice',
  role: 'viewer',
};

test('every attribute the gateway writes reads back as written, nothing flagged', () => {
  expect(fromItem(toItem(complete))).toEqual(complete);
  const minimal = { keyHash: 'b'.repeat(64), id: 'key_1', name: 'bob', createdAt: '2026-11-01T00:00:00.000Z', revoked: true };
  expect(fromItem(toItem(minimal))).toEqual(minimal);
});

test('a malformed attribute is never read as absent: it restricts, and is named', () => {
  const record = fromItem({ ...toItem(complete), revoked: { S: 'false' }, expiresAt: { S: 'never' }, models: { SS: ['*'] } });
  expect(record).toMatchObject({ revoked: true, expiresAt: 0, models: [] });
  expect(record.malformed).toEqual(['revoked (BOOL expected, S found)', 'expiresAt (N expected, S found)', 'models (L of S expected, SS found)']);
  expect(fromItem({ ...toItem(complete), id: { N: '1' } }).malformed).toEqual(['id (S expected, N found)']);
});
