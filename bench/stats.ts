/** Small statistics helpers: percentiles within a run, medians and spread across runs. */

/** Nearest-rank percentile of unsorted samples (p in 0..100); NaN when there are none. */
export function percentile(samples: ArrayLike<number>, p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] as number;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** A figure over repeated runs: the median is quoted, min-max is the spread. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

export function summarize(runs: readonly number[]): Summary {
  const finite = runs.filter((value) => Number.isFinite(value));
  if (finite.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, runs: [...runs] };
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite), runs: [...runs] };
}
