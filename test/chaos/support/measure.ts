import type { ChaosGateway } from './gateway.ts';

/** Samples the server's resident memory every 50 ms until stopped; `peakMb` is the highest seen. */
export function sampleRss(gateway: ChaosGateway): { readonly peakMb: number; stop(): void } {
  let peak = gateway.rssMb();
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, gateway.rssMb());
    } catch {
      // The process is gone: the test's liveness check says so, with its output.
    }
  }, 50);
  return {
    get peakMb() {
      return peak;
    },
    stop: () => clearInterval(timer),
  };
}

/** Fails with `description` and the numbers when `value` is not below `limit`. */
export function expectBelow(value: number, limit: number, description: string): void {
  if (!(value < limit)) throw new Error(`${description}: ${Math.round(value * 10) / 10}, expected below ${limit}`);
}

/** Fails with `description` and the numbers when `value` is below `minimum`. */
export function expectAtLeast(value: number, minimum: number, description: string): void {
  if (!(value >= minimum)) throw new Error(`${description}: ${value}, expected at least ${minimum}`);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.floor((sorted.length - 1) / 2)] as number);
}
