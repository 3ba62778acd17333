import { jest } from '@jest/globals';
import { KeyCache, UNKNOWN_KEY_TTL_MS } from '../../../lambda/auth/key-cache.ts';
import type { KeyRecord } from '../../../lambda/auth/key-table.ts';

const record = (keyHash: string): KeyRecord => ({ keyHash, id: `key_${keyHash}`, name: keyHash, createdAt: '2026-11-01T00:00:00.000Z', revoked: false });

/** A key table of the given hashes that counts its reads. */
function table(hashes: string[]) {
  const reads: string[] = [];
  const load = async (hash: string) => {
    reads.push(hash);
    return hashes.includes(hash) ? record(hash) : undefined;
  };
  return { reads, load };
}

afterEach(() => jest.useRealTimers());

test('a miss is remembered for the shorter of 5 s and the TTL, then read again', async () => {
  jest.useFakeTimers({ now: 0, doNotFake: ['nextTick', 'setImmediate'] });
  const { reads, load } = table([]);
  const cache = new KeyCache(30);
  expect(await cache.get('unknown', load)).toBeUndefined();
  jest.setSystemTime(UNKNOWN_KEY_TTL_MS - 1);
  expect(await cache.get('unknown', load)).toBeUndefined();
  expect(reads).toEqual(['unknown']);
  jest.setSystemTime(UNKNOWN_KEY_TTL_MS + 1);
  expect(await cache.get('unknown', load)).toBeUndefined();
  expect(reads).toEqual(['unknown', 'unknown']);

  const short = new KeyCache(1);
  await short.get('other', load);
  jest.setSystemTime(UNKNOWN_KEY_TTL_MS + 1_002);
  await short.get('other', load);
  expect(reads.filter((hash) => hash === 'other')).toHaveLength(2);
});

test('with caching off (TTL 0) nothing is remembered, hits or misses', async () => {
  const { reads, load } = table(['known']);
  const cache = new KeyCache(0);
  for (const hash of ['known', 'known', 'unknown', 'unknown']) await cache.get(hash, load);
  expect(reads).toEqual(['known', 'known', 'unknown', 'unknown']);
});

test('both maps are bounded and evict the least recently used entry', async () => {
  const { reads, load } = table(['a', 'b', 'c']);
  const cache = new KeyCache(30, 2);
  await cache.get('a', load);
  await cache.get('b', load);
  await cache.get('a', load); // a is now the most recent
  await cache.get('c', load); // evicts b
  expect(reads).toEqual(['a', 'b', 'c']);
  await cache.get('a', load);
  await cache.get('b', load);
  expect(reads).toEqual(['a', 'b', 'c', 'b']);

  // Made-up keys: each costs its read, and only the last two are remembered.
  for (const hash of ['x1', 'x2', 'x3']) await cache.get(hash, load);
  await cache.get('x3', load);
  await cache.get('x1', load);
  expect(reads.slice(4)).toEqual(['x1', 'x2', 'x3', 'x1']);
});
