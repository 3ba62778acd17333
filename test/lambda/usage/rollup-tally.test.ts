import { foldUsage, type RollupIncrement } from '../../../lambda/usage/rollup-fold.ts';
import { RollupTally } from '../../../lambda/usage/rollup-tally.ts';
import type { UsageEvent } from '../../../lambda/usage/usage-event.ts';
import { asRows, expectedRows, randomEvents, sorted } from './usage-events.ts';

function tallied(events: readonly UsageEvent[]): Map<string, RollupIncrement> {
  const tally = new RollupTally();
  for (const event of events) tally.add(event);
  const rows = new Map<string, RollupIncrement>();
  tally.foldInto(rows);
  return rows;
}

const base: UsageEvent = { requestId: 'req_1', at: new Date('2026-11-26T10:15:00Z'), keyId: 'key_1', groups: [], model: 'm', modelDimension: 'm', upstream: 'ant', status: 200, costMicroUsd: 10, usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 } };

describe('RollupTally: requests added up by hour and dimension values, folded at a flush', () => {
  test.each([1, 2, 3, 4, 5])('seed %i: the same rows, the same sums, as folding every request', (seed) => {
    const events = randomEvents(seed, 500);
    expect(sorted(asRows(tallied(events)))).toEqual(sorted(expectedRows(events)));
    expect(sorted(asRows(tallied(events)))).toEqual(sorted(asRows(foldUsage(events))));
  });

  test('requests of one hour and one set of values share a tally; its rows are counted at most once each', () => {
    const tally = new RollupTally();
    tally.add(base);
    // all, key, model, upstream at three granularities.
    expect(tally.rows).toBe(12);
    tally.add({ ...base, at: new Date('2026-11-26T10:59:59Z') });
    expect(tally.rows).toBe(12);
    tally.add({ ...base, at: new Date('2026-11-26T11:00:00Z') });
    expect(tally.rows).toBe(24);
    const rows = new Map<string, RollupIncrement>();
    tally.foldInto(rows);
    expect(tally.rows).toBe(0);
    // The day's and month's rows are shared by both hours.
    expect(rows.size).toBe(16);
    expect(rows.get('R#D#all#2026-11\u00002026-11-26#*')?.counters.requests).toBe(3);
    expect(rows.get('R#H#all#2026-11-26\u00002026-11-26T10#*')?.counters.requests).toBe(2);
    // Starting over: a second fold adds nothing.
    tally.foldInto(rows);
    expect(rows.get('R#D#all#2026-11\u00002026-11-26#*')?.counters.requests).toBe(3);
  });

  test('values that would read alike if joined stay apart: each counts in its own rows', () => {
    const events: UsageEvent[] = [
      { ...base, keyId: undefined, personSub: 'key_1' },
      { ...base, keyId: 'key_1', personSub: undefined },
      { ...base, personSub: 'p|m', modelDimension: 'x' },
      { ...base, personSub: 'p', modelDimension: 'm|x' },
      { ...base, groups: ['a|b'] },
      { ...base, groups: ['a', 'b'] },
      { ...base, personSub: '-', groups: ['-'] },
      { ...base, personSub: undefined, groups: ['-', '-'] },
    ];
    expect(sorted(asRows(tallied(events)))).toEqual(sorted(expectedRows(events)));
  });
});
