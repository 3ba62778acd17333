import { consoleCalls } from './console.ts';
import { PATHS, PASSTHROUGH } from './workloads.ts';

/**
 * The rows of the results table: each names a figure (see the phases for how it is made), its
 * unit and, for the targets, the bound it must meet. Rows without a target are context
 * (absolute rates, CPU shares) for reading the targeted ones.
 */
export type Unit = 'percent' | 'ms' | 'us' | 'KiB' | 'kB' | 'rps' | 'MiB' | 'count';

export interface Target {
  op: '<=' | '>=';
  value: number;
  /** A second, harder bound, reported beside pass/miss. */
  stretch?: number;
}

export interface Row {
  label: string;
  key: string;
  unit: Unit;
  target?: Target;
  /** Path this row depends on: shown as not available when the gateway does not serve it yet. */
  pathId?: string;
}

const KIB = 1024;

function perPath(make: (id: string, label: string) => Row): Row[] {
  return PASSTHROUGH.map((path) => make(path.id, path.label));
}

/** The console's calls, as the table names them (the paths do not matter here). */
const CONSOLE_CALLS = consoleCalls({ people: [], keys: [], models: [], upstreams: [] }, 0);

export const ROWS: Row[] = [
  ...perPath((id, label) => ({ label: `Throughput gateway/direct, c=32 (${label})`, key: `ratio.${id}`, unit: 'percent', target: { op: '>=', value: 0.25, stretch: 0.4 } })),
  ...perPath((id, label) => ({ label: `Added latency p50, c=1 (${label})`, key: `added.c1.p50.${id}`, unit: 'ms', target: { op: '<=', value: 0.3 } })),
  ...perPath((id, label) => ({ label: `Added latency p99, c=1 (${label})`, key: `added.c1.p99.${id}`, unit: 'ms', target: { op: '<=', value: 2 } })),
  ...perPath((id, label) => ({ label: `Added time to first byte p50, stream (${label})`, key: `added.ttfb.p50.${id}`, unit: 'ms', target: { op: '<=', value: 0.5 } })),
  ...PATHS.map((path): Row => ({
    label: `CPU per event, ${path.kind}, bursts (${path.label})`,
    key: `cpu.event.burst.${path.id}`,
    unit: 'us',
    target: { op: '<=', value: path.kind === 'passthrough' ? 3 : 6 },
    pathId: path.id,
  })),
  { label: 'Memory per open stream (RSS, 1,000 paced streams)', key: 'memory.stream.rss', unit: 'KiB', target: { op: '<=', value: 64 * KIB } },
  { label: 'Handler bundle, minified', key: 'bundle.bytes', unit: 'kB', target: { op: '<=', value: 500_000 } },
  { label: 'Cold import of the bundle (in a fresh process)', key: 'cold.import', unit: 'ms', target: { op: '<=', value: 150 } },
  // Each console call with a year of usage at 1M requests a month (bench/console.ts).
  ...CONSOLE_CALLS.map((call): Row => ({ label: `Console API p95: ${call.label}`, key: `console.${call.id}.p95`, unit: 'ms', target: { op: '<=', value: 300 } })),
];

export const CONTEXT_ROWS: Row[] = [
  ...CONSOLE_CALLS.map((call): Row => ({ label: `Console API p50: ${call.label}`, key: `console.${call.id}.p50`, unit: 'ms' })),
  { label: 'Console: rollup rows seeded (the full run: a year at 1M requests a month)', key: 'console.seed.rows', unit: 'count' },
  ...perPath((id, label) => ({ label: `Requests/s direct, c=32 (${label})`, key: `rps.${id}.direct`, unit: 'rps' })),
  ...perPath((id, label) => ({ label: `Requests/s through gateway, c=32 (${label})`, key: `rps.${id}.gateway`, unit: 'rps' })),
  ...perPath((id, label) => ({ label: `Gateway CPU busy during c=32 (${label})`, key: `share.gateway.${id}`, unit: 'percent' })),
  { label: 'Floor: Function URL emulation + bare handler, throughput/direct', key: 'ratio.floor.emulation', unit: 'percent' },
  { label: 'Floor: emulation + middy streaming, throughput/direct', key: 'ratio.floor.middy', unit: 'percent' },
  { label: 'Floor: CPU per request, emulation + bare handler', key: 'cpu.request.floor.emulation', unit: 'us' },
  { label: 'Floor: CPU per request, emulation + middy streaming', key: 'cpu.request.floor.middy', unit: 'us' },
  { label: 'Floor: bare Node proxy (no emulation), throughput/direct', key: 'ratio.floor.proxy', unit: 'percent' },
  { label: 'Floor: CPU per request, bare Node proxy', key: 'cpu.request.floor.proxy', unit: 'us' },
  { label: 'Floor: CPU per paced event, bare Node proxy', key: 'cpu.event.paced.floor.proxy', unit: 'us' },
  ...perPath((id, label) => ({ label: `Load generator CPU busy, direct c=32 (${label})`, key: `share.loadgen.${id}.direct`, unit: 'percent' })),
  ...perPath((id, label) => ({ label: `Stub CPU busy, direct c=32 (${label})`, key: `share.stub.${id}.direct`, unit: 'percent' })),
  ...perPath((id, label) => ({ label: `Latency p50, c=1, direct (${label})`, key: `c1.p50.${id}.direct`, unit: 'ms' })),
  ...perPath((id, label) => ({ label: `Latency p50, c=1, through gateway (${label})`, key: `c1.p50.${id}.gateway`, unit: 'ms' })),
  ...perPath((id, label) => ({ label: `Added latency p50, c=32 (${label})`, key: `added.c32.p50.${id}`, unit: 'ms' })),
  ...perPath((id, label) => ({ label: `Added latency p99, c=32 (${label})`, key: `added.c32.p99.${id}`, unit: 'ms' })),
  ...perPath((id, label) => ({ label: `Added time to first byte p99, stream (${label})`, key: `added.ttfb.p99.${id}`, unit: 'ms' })),
  ...perPath((id, label) => ({ label: `Added time to last byte p50, 16-delta stream (${label})`, key: `added.stream.p50.${id}`, unit: 'ms' })),
  ...PATHS.map((path): Row => ({ label: `CPU per request, non-streaming (${path.label})`, key: `cpu.request.${path.id}`, unit: 'us', pathId: path.id })),
  ...PATHS.map((path): Row => ({ label: `CPU per stream, 16 deltas (${path.label})`, key: `cpu.stream.${path.id}`, unit: 'us', pathId: path.id })),
  ...PATHS.map((path): Row => ({ label: `CPU per event, paced: one event per read (${path.label})`, key: `cpu.event.paced.${path.id}`, unit: 'us', pathId: path.id })),
  ...perPath((id, label) => ({ label: `Stub CPU per paced event it writes (floor) (${label})`, key: `cpu.event.paced.stub.${id}`, unit: 'us' })),
  { label: 'Busiest window: CPU used by other processes (share of one core)', key: 'share.others.max', unit: 'percent' },
  { label: 'Gateway RSS, warmed, before the streams', key: 'memory.rss.before', unit: 'MiB' },
  { label: 'Gateway RSS holding the streams', key: 'memory.rss.during', unit: 'MiB' },
  { label: 'Live JS heap per open stream (after GC)', key: 'memory.stream.heap', unit: 'KiB' },
  { label: 'Stub RSS per stream it holds open (floor: bare node:http)', key: 'memory.stream.rss.stub', unit: 'KiB' },
  { label: 'Streams open end to end in the memory phase', key: 'memory.streams.open', unit: 'count' },
  { label: 'Requests metered in the usage table, per repetition (metering on, as shipped)', key: 'metering.requests', unit: 'count' },
  { label: 'Handler bundle, gzip', key: 'bundle.gzip', unit: 'kB' },
  { label: 'Fresh process importing the bundle, spawn to exit', key: 'cold.process', unit: 'ms' },
  { label: 'Fresh bare `node -e ""`, spawn to exit', key: 'cold.bareNode', unit: 'ms' },
];

export function formatValue(value: number, unit: Unit): string {
  if (!Number.isFinite(value)) return 'n/a';
  switch (unit) {
    case 'percent':
      return `${(value * 100).toFixed(1)}%`;
    case 'ms':
      return `${value.toFixed(3)} ms`;
    case 'us':
      return `${value.toFixed(2)} us`;
    case 'KiB':
      return `${(value / KIB).toFixed(1)} KiB`;
    case 'kB':
      return `${(value / 1000).toFixed(1)} kB`;
    case 'rps':
      return `${value.toFixed(0)}/s`;
    case 'MiB':
      return `${(value / KIB / KIB).toFixed(1)} MiB`;
    case 'count':
      return value.toFixed(0);
  }
}

export function formatTarget(target: Target | undefined, unit: Unit): string {
  if (target === undefined) return '';
  const base = `${target.op} ${formatValue(target.value, unit)}`;
  return target.stretch === undefined ? base : `${base} (stretch ${formatValue(target.stretch, unit)})`;
}

/** pass / MISS against the target, and whether the stretch bound is met too. */
export function verdict(value: number, target: Target): string {
  if (!Number.isFinite(value)) return 'n/a';
  const meets = (bound: number) => (target.op === '<=' ? value <= bound : value >= bound);
  const result = meets(target.value) ? 'pass' : 'MISS';
  if (target.stretch === undefined) return result;
  return `${result}${meets(target.stretch) ? ', stretch met' : ', stretch not met'}`;
}
