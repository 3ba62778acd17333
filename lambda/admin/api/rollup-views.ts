import type { AdminContext } from '../context.ts';
import { adminError } from '../http.ts';

/** The usage views need the stats table (GATEWAY_STATS_TABLE). */
export function noRollups() {
  return adminError.unavailable('Usage is not rolled up on this gateway (no stats table): set GATEWAY_STATS_TABLE, as npm start and the stack do.');
}

/**
 * How current the rollups are: on Lambda the end of the last minute the aggregator folded (they
 * lag 2 to 4 minutes); on npm start `live` (written at each flush, every second).
 */
export async function asOf(context: AdminContext): Promise<{ asOf: string | null; live: boolean }> {
  const at = await context.rollups?.asOf();
  return { asOf: at ? at.toISOString() : null, live: at === undefined };
}
