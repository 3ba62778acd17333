import { parseLimits, parseMicroUsd, UsageError } from '../../../bin/local/key-options.ts';

describe('dollar budget flags', () => {
  test.each([
    ['25', 25_000_000],
    ['0.0001', 100],
    ['.5', 500_000],
    ['12.345678', 12_345_678],
    ['0.000001', 1],
    ['1000000', 1_000_000_000_000],
  ])('%s dollars is %d micro-dollars, exactly', (text, micro) => {
    expect(parseMicroUsd(text)).toBe(micro);
  });

  test.each(['0', '0.0000001', '1.2345678', '-1', '1e3', '$5', '', '.', '1.', 'none', '99999999999'])('%j is not a budget', (text) => {
    expect(parseMicroUsd(text)).toBeUndefined();
  });

  test('parses with the other limits, and none removes them on update', () => {
    expect(parseLimits({ 'usd-per-day': '0.0001', 'usd-per-month': '30', rpm: '5' }, false)).toEqual({ set: { microUsdPerDay: 100, microUsdPerMonth: 30_000_000, requestsPerMinute: 5 }, remove: [] });
    expect(parseLimits({ 'usd-per-day': 'none' }, true)).toEqual({ set: {}, remove: ['microUsdPerDay'] });
  });

  test('refuses a bad amount with the flag, the rule and the value', () => {
    expect(() => parseLimits({ 'usd-per-day': '0' }, false)).toThrow(new UsageError('--usd-per-day must be an amount in US dollars above 0 with at most 6 decimals, like 25 or 0.0001; got "0"'));
    expect(() => parseLimits({ 'usd-per-month': 'none' }, false)).toThrow(/--usd-per-month must be an amount .*; got "none"/);
    expect(() => parseLimits({ 'usd-per-month': '-3' }, true)).toThrow(/\(or none to remove the limit\); got "-3"/);
  });
});
