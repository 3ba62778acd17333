/**
 * The periodic checks of open streams (keepalive due, upstream idle), on one shared timer per
 * period instead of a `setInterval` per stream: a long-running server holding a thousand streams
 * keeps a few timers, and wakes once per period for all of them. A check runs within one period
 * of becoming due, as it did with a timer of its own.
 */
export type Watcher = (now: number) => void;

interface Group {
  timer: ReturnType<typeof setInterval>;
  watchers: Set<Watcher>;
}

const groups = new Map<number, Group>();
const periods = new Map<Watcher, number>();

export function watchEvery(watcher: Watcher, periodMs: number): void {
  let group = groups.get(periodMs);
  if (group === undefined) {
    const watchers = new Set<Watcher>();
    const timer = setInterval(() => {
      const now = Date.now();
      // A watcher that ends its stream unwatches itself here; deleting from a Set while iterating it is safe.
      for (const watch of watchers) watch(now);
    }, periodMs);
    // Open streams keep the process alive through their sockets, never through this timer.
    timer.unref();
    group = { timer, watchers };
    groups.set(periodMs, group);
  }
  group.watchers.add(watcher);
  periods.set(watcher, periodMs);
}

export function unwatch(watcher: Watcher): void {
  const period = periods.get(watcher);
  if (period === undefined) return;
  periods.delete(watcher);
  const group = groups.get(period) as Group;
  group.watchers.delete(watcher);
  if (group.watchers.size === 0) {
    clearInterval(group.timer);
    groups.delete(period);
  }
}
