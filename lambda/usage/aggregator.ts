import { foldUsage, type RollupIncrement } from './rollup-fold.ts';
import { epochMinute, type DynamoStatsStore } from './stats-store.ts';
import { SETTLE_MINUTES } from './stats-table.ts';

export interface AggregateOptions {
  /** No minute is started after this (epoch ms): the run's time budget. */
  stopAt: number;
  /** The clock (tests set it). */
  now?: () => number;
  /** The first run (no cursor yet) starts this many minutes back. */
  firstRunMinutes?: number;
  /** Rollup writes in flight at once. */
  writeConcurrency?: number;
}

export interface AggregateResult {
  /** Minutes folded by this run, events read, rows written and rows found already written (another run's). */
  minutes: number;
  events: number;
  rowsWritten: number;
  rowsSkipped: number;
  /** The last minute folded completely (the rollups are "as of" its end). */
  cursor: number | undefined;
  /** Foldable minutes left for the next run (0 when caught up). */
  behind: number;
}

/**
 * Lambda's rollup writer: folds each whole minute that ended at least SETTLE_MINUTES ago, in
 * order, from the cursor (the last minute folded): reads the minute's event items (16
 * partitions, page by page), folds them (foldUsage, the same fold npm start runs in memory),
 * adds each rollup row once, conditioned on the row's watermark, then moves the cursor. A row
 * that already has the minute (a rerun after a run died half way, an overlapping run) refuses
 * the write, so no minute counts twice and none is skipped: the cursor moves only once every row
 * has it.
 */
export async function aggregate(store: Pick<DynamoStatsStore, 'cursor' | 'readMinute' | 'applyRollup' | 'advanceCursor'>, options: AggregateOptions): Promise<AggregateResult> {
  const now = options.now ?? Date.now;
  const concurrency = options.writeConcurrency ?? 16;
  const last = epochMinute(now()) - SETTLE_MINUTES - 1;
  let cursor = await store.cursor();
  const result: AggregateResult = { minutes: 0, events: 0, rowsWritten: 0, rowsSkipped: 0, cursor, behind: 0 };
  let minute = (cursor ?? last - (options.firstRunMinutes ?? 60)) + 1;
  for (; minute <= last && now() < options.stopAt; minute++) {
    const folded = new Map<string, RollupIncrement>();
    const events = await store.readMinute(minute, (page) => foldUsage(page, folded));
    const rows = [...folded.values()];
    for (let i = 0; i < rows.length; i += concurrency) {
      const applied = await Promise.all(rows.slice(i, i + concurrency).map((row) => store.applyRollup(row, minute)));
      const written = applied.filter(Boolean).length;
      result.rowsWritten += written;
      result.rowsSkipped += applied.length - written;
    }
    await store.advanceCursor(minute, new Date(now()));
    cursor = minute;
    result.minutes++;
    result.events += events;
  }
  result.cursor = cursor;
  result.behind = Math.max(0, last - minute + 1);
  return result;
}
