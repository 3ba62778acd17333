/**
 * What Lambda bills a gateway turn: one request, plus duration for as long as the stream holds
 * the function (the model's whole answer, not just the gateway's own work) at the configured
 * memory. Arm64 (the stack's architecture) on-demand prices, US East (N. Virginia), first
 * duration tier (the first 7.5 billion GB-s a month), from the public price list.
 */
export const LAMBDA_ARM64_PRICES = {
  perGbSecondUsd: 0.0000133334,
  perRequestUsd: 0.2 / 1_000_000,
  source: 'https://aws.amazon.com/lambda/pricing/',
  region: 'US East (N. Virginia)',
  /** When these figures were read from the source. */
  asOf: '2026-11-25',
} as const;

/** Turn durations the report prices: a short exchange, a typical agent step, a long one. */
export const TURN_SECONDS = [5, 30, 120] as const;

/**
 * Dollars per million turns of `turnSeconds` each at `memoryMb`, plus `addedMs` the gateway
 * adds per turn. Lambda bills memory in GB of 1,024 MB and duration in 1 ms steps. Cold starts'
 * INIT time (billed too since 2025-08-01) is left out: it is paid once per execution environment,
 * not per turn; `initCostUsd` prices one.
 */
export function usdPerMillionTurns(memoryMb: number, turnSeconds: number, addedMs = 0): number {
  const billedSeconds = Math.ceil(turnSeconds * 1000 + addedMs) / 1000;
  return 1_000_000 * (LAMBDA_ARM64_PRICES.perRequestUsd + (memoryMb / 1024) * billedSeconds * LAMBDA_ARM64_PRICES.perGbSecondUsd);
}

/** What one cold start's INIT phase costs at `memoryMb`. */
export function initCostUsd(memoryMb: number, initMs: number): number {
  return (memoryMb / 1024) * (Math.ceil(initMs) / 1000) * LAMBDA_ARM64_PRICES.perGbSecondUsd;
}
