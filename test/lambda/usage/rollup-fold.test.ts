import { addCounters, foldUsage, isError, rollupValue, ttfbBucket, type RollupIncrement } from '../../../lambda/usage/rollup-fold.ts';
import { ROLLUP_RETENTION_DAYS, TTFB_BOUNDS_MS } from '../../../lambda/usage/stats-table.ts';
import { seededRandom } from '../../support/chunking.ts';
import { asRows, expectedRows, randomEvents, sorted } from './usage-events.ts';


describe('foldUsage: rollups are the sum of the events, for every dimension and bucket', () => {
  test.each([1, 2, 3, 4, 5, 6, 7, 8])('seed %i: all at once, one by one, and in random chunks merged', (seed) => {
    const events = randomEvents(seed, 400);
    const expected = sorted(expectedRows(events));
    expect(sorted(asRows(foldUsage(events)))).toEqual(expected);

    // npm start's running fold: one event at a time into the same map.
    const running = new Map<string, RollupIncrement>();
    for (const event of events) foldUsage([event], running);
    expect(sorted(asRows(running))).toEqual(expected);

    // The aggregator's: minute by minute (here random chunks), each chunk's rows added to what is stored.
    const next = seededRandom(seed * 31);
    const stored = new Map<string, RollupIncrement>();
    for (let i = 0; i < events.length; ) {
      const size = 1 + Math.floor(next() * 60);
      for (const [key, row] of foldUsage(events.slice(i, i + size))) {
        const existing = stored.get(key);
        if (existing) addCounters(existing.counters, row.counters);
        else stored.set(key, row);
      }
      i += size;
    }
    expect(sorted(asRows(stored))).toEqual(expected);
  });

  test('the layout of DESIGN §5: partition by granularity, dimension and period; sort by bucket and value', () => {
    const at = new Date('2026-11-26T14:05:00Z');
    const rows = foldUsage([{ at, keyId: 'key_1', personSub: 'alice', groups: ['ml'], modelDimension: 'claude-*', upstream: 'ant', status: 200, costMicroUsd: 5, usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 }, ttfbMs: 120 }]);
    const keys = [...rows.values()].map((row) => `${row.pk} ${row.sk}`).sort();
    expect(keys).toEqual(
      [
        'R#D#all#2026-11 2026-11-26#*', 'R#D#group#2026-11 2026-11-26#ml', 'R#D#key#2026-11 2026-11-26#key_1', 'R#D#model#2026-11 2026-11-26#claude-*', 'R#D#person#2026-11 2026-11-26#alice', 'R#D#upstream#2026-11 2026-11-26#ant',
        'R#H#all#2026-11-26 2026-11-26T14#*', 'R#H#group#2026-11-26 2026-11-26T14#ml', 'R#H#key#2026-11-26 2026-11-26T14#key_1', 'R#H#model#2026-11-26 2026-11-26T14#claude-*', 'R#H#person#2026-11-26 2026-11-26T14#alice', 'R#H#upstream#2026-11-26 2026-11-26T14#ant',
        'R#M#all#2026 2026-11#*', 'R#M#group#2026 2026-11#ml', 'R#M#key#2026 2026-11#key_1', 'R#M#model#2026 2026-11#claude-*', 'R#M#person#2026 2026-11#alice', 'R#M#upstream#2026 2026-11#ant',
      ].sort(),
    );
    const hour = [...rows.values()].find((row) => row.pk === 'R#H#all#2026-11-26');
    // t04: 100 < 120 <= 150 (the fifth bound).
    expect(hour?.counters).toEqual({ requests: 1, inputTokens: 1, outputTokens: 2, costMicroUsd: 5, t04: 1 });
  });

  test('retention: each row expires its granularity\'s retention after its bucket ends', () => {
    const at = new Date('2026-11-26T14:05:00Z');
    const rows = [...foldUsage([{ at, groups: [], modelDimension: 'm', upstream: 'u', costMicroUsd: 0 }]).values()];
    const expiry = (prefix: string) => rows.find((row) => row.pk.startsWith(prefix))?.expiresAt;
    const days = (n: number) => n * 86_400;
    expect(expiry('R#H#')).toBe(Date.parse('2026-11-26T15:00:00Z') / 1000 + days(ROLLUP_RETENTION_DAYS.H));
    expect(expiry('R#D#')).toBe(Date.parse('2026-11-27T00:00:00Z') / 1000 + days(ROLLUP_RETENTION_DAYS.D));
    expect(expiry('R#M#')).toBe(Date.parse('2026-12-01T00:00:00Z') / 1000 + days(ROLLUP_RETENTION_DAYS.M));
  });

  test('errors: a status of 400 or more, or an outcome other than ok; a missing status counts as a failure', () => {
    expect([isError(200, undefined), isError(200, 'ok'), isError(399, 'ok')]).toEqual([false, false, false]);
    expect([isError(400, undefined), isError(529, 'ok'), isError(200, 'client_closed'), isError(undefined, undefined)]).toEqual([true, true, true, true]);
  });

  test('time to first byte: the first bucket whose upper bound holds it; beyond the last bound, the open bucket', () => {
    expect(ttfbBucket(0)).toBe(0);
    expect(ttfbBucket(25)).toBe(0);
    expect(ttfbBucket(25.5)).toBe(1);
    expect(ttfbBucket(60_000)).toBe(TTFB_BOUNDS_MS.length - 2);
    expect(ttfbBucket(3_600_000)).toBe(TTFB_BOUNDS_MS.length - 1);
  });

  test('a dimension value fits a sort key: long values are cut, never inside a surrogate pair', () => {
    expect(rollupValue('ml')).toBe('ml');
    const long = `${'x'.repeat(255)}😀tail`;
    expect(rollupValue(long)).toBe('x'.repeat(255));
    expect(Buffer.byteLength(rollupValue('語'.repeat(400)))).toBeLessThanOrEqual(768);
    const rows = foldUsage([{ at: new Date(), groups: ['g'.repeat(1000), 'g'.repeat(1001)], modelDimension: 'm', upstream: 'u', costMicroUsd: 0 }]);
    // Both groups cut to the same 256 characters: counted once, not twice.
    expect([...rows.values()].filter((row) => row.pk.startsWith('R#D#group#')).map((row) => row.counters.requests)).toEqual([1]);
  });
});
