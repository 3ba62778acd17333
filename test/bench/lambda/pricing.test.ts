import { initCostUsd, LAMBDA_ARM64_PRICES, usdPerMillionTurns } from '../../../bench/lambda/pricing.ts';

/** The cost table of docs/deployment.md is made by these two functions: worked examples from the price list. */
test('a million 30-second turns at 1,024 MB: 30 M GB-s of arm64 duration plus a million requests', () => {
  // 1,000,000 x 1 GB x 30 s x $0.0000133334 = $400.002, + $0.20 of requests.
  expect(usdPerMillionTurns(1024, 30)).toBeCloseTo(400.202, 3);
  // Half the memory, half the duration cost; the request price stays.
  expect(usdPerMillionTurns(512, 30)).toBeCloseTo(200.101 + 0.1, 3);
});

test('what the gateway adds is billed in whole milliseconds', () => {
  expect(usdPerMillionTurns(1024, 5, 2.1)).toBeCloseTo(usdPerMillionTurns(1024, 5.003), 9);
  expect(usdPerMillionTurns(128, 120, 0)).toBeCloseTo(1e6 * (0.2 / 1e6 + 0.125 * 120 * LAMBDA_ARM64_PRICES.perGbSecondUsd), 6);
});

test('one cold start: its INIT milliseconds at the memory size', () => {
  expect(initCostUsd(2048, 250)).toBeCloseTo(2 * 0.25 * 0.0000133334, 12);
});
