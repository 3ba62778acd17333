import { dimensionValues, eventCounters, foldCounters, addCounters, type RollupCounters, type RollupIncrement, type RollupSource } from './rollup-fold.ts';
import { GRANULARITIES } from './stats-table.ts';

type Dimensions = Pick<RollupSource, 'at' | 'keyId' | 'personSub' | 'groups' | 'modelDimension' | 'upstream'>;

interface Tally {
  /** The first event of its kind: what the rows are keyed by (the hour of `at` and the dimension values). */
  event: Dimensions;
  counters: RollupCounters;
}

const HOUR_MS = 3_600_000;

/**
 * npm start's running rollups, added up before they are folded: requests of the same hour and the
 * same dimension values (key, person, groups, model, upstream) share one tally, and a flush folds
 * each tally into its rows once. Folding every request at once built some fifteen row keys per
 * request (every dimension value at every granularity), 4.6 KB of garbage per request, for rows
 * that a flush writes once a second (docs/performance.md). The sums are the same: the fold adds.
 */
export class RollupTally {
  #tallies = new Map<string, Tally>();
  #rows = 0;

  /** Rows the tallies fold into, at most: a row two tallies share (the same day, other hours) is counted for each. */
  get rows(): number {
    return this.#rows;
  }

  add(event: RollupSource): void {
    const key = tallyKey(event);
    const tally = this.#tallies.get(key);
    if (tally) return addCounters(tally.counters, eventCounters(event));
    this.#tallies.set(key, { event: dimensionsOf(event), counters: eventCounters(event) });
    this.#rows += GRANULARITIES.length * dimensionValues(event).length;
  }

  /** Folds every tally into `rows` (a flush's pending rows) and starts over. */
  foldInto(rows: Map<string, RollupIncrement>): void {
    for (const tally of this.#tallies.values()) foldCounters(tally.event, tally.counters, rows);
    this.#tallies = new Map();
    this.#rows = 0;
  }
}

/** Only what the fold reads: a tally must not keep the whole event (its request id, usage) alive. */
function dimensionsOf(event: RollupSource): Dimensions {
  return { at: event.at, keyId: event.keyId, personSub: event.personSub, groups: event.groups, modelDimension: event.modelDimension, upstream: event.upstream };
}

/**
 * The hour and every dimension value, each prefixed with its length: no value (a person's
 * subject, a group name) can make two different sets of values read as one.
 */
function tallyKey(event: RollupSource): string {
  let key = `${Math.floor(event.at.getTime() / HOUR_MS)}|${part(event.keyId)}${part(event.personSub)}${part(event.modelDimension)}${part(event.upstream)}${event.groups.length}`;
  for (const group of event.groups) key += part(group);
  return key;
}

function part(value: string | undefined): string {
  return value === undefined ? '-|' : `${value.length}:${value}|`;
}
