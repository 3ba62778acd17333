import { unwatch, watchEvery, type Watcher } from '../../../lambda/upstream/stream-watch.ts';

/** Resolves after `ms` of real time (the watches run on real timers). */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('stream watches on one shared timer per period', () => {
  test('every watcher of a period is called with the same time on each tick, and no longer once unwatched', async () => {
    const seen: Array<[string, number]> = [];
    const first: Watcher = (now) => seen.push(['first', now]);
    const second: Watcher = (now) => seen.push(['second', now]);
    watchEvery(first, 20);
    watchEvery(second, 20);
    await pause(70);
    unwatch(first);
    unwatch(second);
    const ticks = seen.length;
    expect(ticks).toBeGreaterThanOrEqual(4);
    // Both ran on each tick, with the tick's one clock reading.
    for (let i = 0; i + 1 < seen.length; i += 2) expect([seen[i]?.[0], seen[i + 1]?.[0], seen[i]?.[1] === seen[i + 1]?.[1]]).toEqual(['first', 'second', true]);
    await pause(50);
    expect(seen).toHaveLength(ticks);
  });

  test('a watcher that unwatches itself during a tick stops alone; the others keep running', async () => {
    const calls = { self: 0, other: 0 };
    const self: Watcher = () => {
      calls.self++;
      unwatch(self);
    };
    const other: Watcher = () => calls.other++;
    watchEvery(self, 15);
    watchEvery(other, 15);
    await pause(60);
    unwatch(other);
    expect(calls.self).toBe(1);
    expect(calls.other).toBeGreaterThanOrEqual(2);
  });

  test('unwatching a watcher never watched, or twice, does nothing', () => {
    const watcher: Watcher = () => {};
    expect(() => unwatch(watcher)).not.toThrow();
    watchEvery(watcher, 25);
    unwatch(watcher);
    expect(() => unwatch(watcher)).not.toThrow();
  });
});
