import { parseMicroUsd } from '../../../usage/cost.ts';

/**
 * How numbers and times read in the console: dollars with their currency ($1,234.56 USD), counts
 * grouped, times in the viewer's own zone with the UTC time on hover.
 */
const dollars = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 });
const smallDollars = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 6 });
const counts = new Intl.NumberFormat('en-US');

/** Micro-dollars as `$1,234.56 USD` (amounts under a dollar keep up to six decimals: `$0.0042 USD`). */
export function usd(micro: number): string {
  const amount = micro / 1e6;
  return `${(Math.abs(amount) < 1 && amount !== 0 ? smallDollars : dollars).format(amount)} USD`;
}

/** A config's dollars (caps) as `$50.00 USD`. */
export function usdAmount(amount: number): string {
  return `${dollars.format(amount)} USD`;
}

export function count(value: number): string {
  return counts.format(value);
}

export function percent(ratio: number): string {
  return `${(ratio * 100).toFixed(ratio > 0 && ratio < 0.001 ? 2 : 1)}%`;
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '–';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** `2026-11-26 14:03:07 UTC`: the hover text of every time. */
export function utc(iso: string | number): string {
  return `${new Date(iso).toISOString().replace('T', ' ').slice(0, 19)} UTC`;
}

/** A time in the viewer's zone. */
export function local(iso: string | number, withSeconds = false): string {
  return new Date(iso).toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', ...(withSeconds ? { second: '2-digit' } : {}) });
}

export function localTime(iso: string | number): string {
  return new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

/** A rollup bucket as people read it: hours in the viewer's zone; days and months are UTC days and months. */
export function bucketLabel(bucket: string, start: number): string {
  if (bucket.length === 13) return local(start);
  if (bucket.length === 10) return new Date(start).toLocaleDateString(undefined, { timeZone: 'UTC', year: 'numeric', month: 'short', day: 'numeric', weekday: 'short' });
  return new Date(start).toLocaleDateString(undefined, { timeZone: 'UTC', year: 'numeric', month: 'long' });
}

/** A metric's value as text, by its unit. */
export function metricValue(unit: string, value: number): string {
  return unit === 'microUsd' ? usd(value) : count(value);
}

/** Dollars typed in a field (`12.5`, `$ 0.0001`) as micro-dollars, or undefined when it is no amount above 0 with at most six decimals. */
export function parseUsd(text: string): number | undefined {
  return parseMicroUsd(text.replace(/[\s$,]/g, ''));
}
