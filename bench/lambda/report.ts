import { median, percentile } from '../stats.ts';
import { INIT_BURST } from './cpu-quota.ts';
import { initCostUsd, LAMBDA_ARM64_PRICES, TURN_SECONDS, usdPerMillionTurns } from './pricing.ts';
import type { LambdaResults, SizeResult } from './sizes.ts';

/** The per-size tables, as Markdown (they go into docs/deployment.md as printed). */
export function formatLambdaReport(results: LambdaResults, smoke: boolean): string {
  const lines = [
    `Lambda memory sizes${smoke ? ' (SMOKE RUN: one sample each, figures are meaningless)' : ''}: ${results.method}`,
    `Production bundle as deployed (the exec wrapper, the gateway's runtime client) behind a Function URL front; DynamoDB, Secrets Manager and the upstream over HTTPS on loopback.`,
    `Cold start on demand: ${INIT_BURST} (as Lambda runs an on-demand environment); "throttled from start": the size's share from process start.`,
    `Others' load: up to ${(results.othersShare * 100).toFixed(0)} % of a core in a measured window; load average ${results.loadAverage.start.map((value) => value.toFixed(2)).join(' ')} at start, ${results.loadAverage.end.map((value) => value.toFixed(2)).join(' ')} at end.`,
    '',
    table(
      ['Memory', 'CPU', 'Bundle import', 'Node start', 'Cold start on demand: first answer', 'of which init', 'of which invocation', 'Cold start CPU', 'Cold start throttled from start', 'Warm, billed p50', 'Warm, added p50', 'Warm after a pause, added p50', 'CPU / request', 'CPU / event (pass / transl.)', 'Peak RSS', 'Live heap held by an open stream (+ outside the heap)', 'RSS holding a stream', 'Throttled'],
      results.sizes.map((size) => [
        memory(size),
        Number.isFinite(size.share) ? `${(size.share * 100).toFixed(0)} %` : 'full',
        ms(size.importMs),
        ms(size.nodeStartMs),
        ms(size.coldMs),
        ms(size.initMs),
        ms(size.firstInvocationMs),
        ms(size.coldCpuMs),
        ms(size.coldThrottledMs),
        oneMs(percentile(size.warmBilledMs, 50)),
        oneMs(addedMs(size)),
        oneMs(pausedAddedMs(size)),
        `${Math.round(size.cpuPerRequestUs)} us`,
        `${perEvent(size, 'messages')} / ${perEvent(size, 'responses-to-messages')}`,
        `${Math.round(size.peakRssBytes / 2 ** 20)} MiB`,
        Number.isFinite(size.streamHeapBytes) ? `${Math.round(size.streamHeapBytes / 1024)} KiB (${size.streamExternalBytes < 0 ? '' : '+'}${Math.round(size.streamExternalBytes / 1024)} KiB)` : 'n/a',
        Number.isFinite(size.streamEnvironmentRssBytes) ? `${Math.round(size.streamEnvironmentRssBytes / 2 ** 20)} MiB` : 'n/a',
        `${Math.round(size.throttledMs)} ms`,
      ]),
    ),
    '',
    `Cost per million turns (a turn holds the function for its whole duration; ${LAMBDA_ARM64_PRICES.region} arm64 prices of ${LAMBDA_ARM64_PRICES.asOf}: $${LAMBDA_ARM64_PRICES.perGbSecondUsd} per GB-s, $${(LAMBDA_ARM64_PRICES.perRequestUsd * 1e6).toFixed(2)} per million requests, ${LAMBDA_ARM64_PRICES.source})`,
    '',
    table(
      ['Memory', 'Cold start (median)', 'Added latency, warm (median)', 'Added latency, warm after a pause (median)', ...TURN_SECONDS.map((seconds) => `$ / M turns of ${seconds} s`), 'One cold start (INIT)'],
      results.sizes.map((size) => [
        memory(size),
        ms(size.coldMs).split(' (')[0] as string,
        oneMs(addedMs(size)),
        oneMs(pausedAddedMs(size)),
        ...TURN_SECONDS.map((seconds) => (size.memoryMb === undefined ? 'n/a' : `$${usdPerMillionTurns(size.memoryMb, seconds, percentile(size.warmBilledMs, 50)).toFixed(2)}`)),
        size.memoryMb === undefined ? 'n/a' : `$${initCostUsd(size.memoryMb, median(size.initMs)).toFixed(7)}`,
      ]),
    ),
  ];
  return lines.join('\n');
}

/** What the gateway adds to a warm request: through the function minus straight to the upstream, medians. */
export function addedMs(size: SizeResult): number {
  return percentile(size.warmClientMs, 50) - percentile(size.directClientMs, 50);
}

/** The same for requests that each arrive after a pause, as an agent's turns do. */
export function pausedAddedMs(size: SizeResult): number {
  return percentile(size.pausedClientMs, 50) - percentile(size.pausedDirectMs, 50);
}

function memory(size: SizeResult): string {
  return size.memoryMb === undefined ? 'unthrottled' : `${size.memoryMb.toLocaleString('en-US')} MB`;
}

/** Median with the spread of the samples. */
function ms(samples: number[]): string {
  if (samples.length === 0) return 'n/a';
  const spread = samples.length > 1 ? ` (${Math.round(Math.min(...samples))}-${Math.round(Math.max(...samples))})` : '';
  return `${Math.round(median(samples))} ms${spread}`;
}

function oneMs(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(1)} ms` : 'n/a';
}

function perEvent(size: SizeResult, pathId: string): string {
  const value = size.cpuPerEventUs[pathId];
  return value === undefined || !Number.isFinite(value) ? 'n/a' : `${value.toFixed(1)} us`;
}

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
