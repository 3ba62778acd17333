import { jest } from '@jest/globals';
import { unwatch, watchEvery, type Watcher } from '../../../lambda/upstream/stream-watch.ts';

// Fake timers: the ticks are counted exactly, so a loaded machine that delays real timers cannot
// make these fail (an earlier version paused for real time and once saw one tick instead of two).
beforeEach(() => jest.useFakeTimers({ now: 1_000, doNotFake: ['nextTick', 'setImmediate'] }));
afterEach(() => jest.useRealTimers());

describe('stream watches on one shared timer per period', () => {
  test('every watcher of a period is called with the same time on each tick, and no longer once unwatched', () => {
    const seen: Array<[string, number]> = [];
    const first: Watcher = (now) => seen.push(['first', now]);
    const second: Watcher = (now) => seen.push(['second', now]);
    watchEvery(first, 20);
    watchEvery(second, 20);
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(70);
    unwatch(first);
    unwatch(second);
    // Three ticks (at 20, 40 and 60 ms), each calling both watchers with the tick's one clock reading.
    expect(seen).toEqual([
      ['first', 1_020], ['second', 1_020],
      ['first', 1_040], ['second', 1_040],
      ['first', 1_060], ['second', 1_060],
    ]);
    // The last unwatch cleared the shared timer.
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(100);
    expect(seen).toHaveLength(6);
  });

  test('a watcher that unwatches itself during a tick stops alone; the others keep running', () => {
    const calls = { self: 0, other: 0 };
    const self: Watcher = () => {
      calls.self++;
      unwatch(self);
    };
    const other: Watcher = () => calls.other++;
    watchEvery(self, 15);
    watchEvery(other, 15);
    jest.advanceTimersByTime(60);
    unwatch(other);
    expect(calls).toEqual({ self: 1, other: 4 });
  });

  test('watchers of different periods run on their own timers', () => {
    const calls = { fast: 0, slow: 0 };
    const fast: Watcher = () => calls.fast++;
    const slow: Watcher = () => calls.slow++;
    watchEvery(fast, 10);
    watchEvery(slow, 25);
    expect(jest.getTimerCount()).toBe(2);
    jest.advanceTimersByTime(50);
    unwatch(fast);
    unwatch(slow);
    expect(calls).toEqual({ fast: 5, slow: 2 });
    expect(jest.getTimerCount()).toBe(0);
  });

  test('unwatching a watcher never watched, or twice, does nothing', () => {
    const watcher: Watcher = () => {};
    expect(() => unwatch(watcher)).not.toThrow();
    watchEvery(watcher, 25);
    unwatch(watcher);
    expect(() => unwatch(watcher)).not.toThrow();
    expect(jest.getTimerCount()).toBe(0);
  });
});
