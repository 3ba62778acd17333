import uPlot from 'uplot';
import { useEffect, useRef } from 'preact/hooks';
import { count, usd } from './format.ts';
import { html } from './html.ts';
import type { Explorer } from './types.ts';

/** Colours told apart also with colour vision deficiencies (Okabe and Ito), then greys. */
export const COLORS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#6B4C9A', '#8C6D1F', '#1F4E5F', '#B8336A', '#3F7F3F', '#7F3F00'];
const OTHER_COLOR = '#8A8A8A';

/** Dollars on the axis: cents for a dollar and above, up to four significant digits below it ($0.0025). */
function axisDollars(amount: number): string {
  if (amount === 0) return '$0';
  return amount >= 1 ? `$${amount.toLocaleString('en-US', { maximumFractionDigits: 2 })}` : `$${amount.toLocaleString('en-US', { maximumSignificantDigits: 4 })}`;
}
const HEIGHT = 300;

/** The series the chart and the table show, in the same order: the top values, then the rest as one. */
export function shownSeries(explorer: Explorer): { label: string; points: number[]; total: number; color: string }[] {
  const shown = explorer.series.map((entry, i) => ({ label: entry.label ?? entry.value, points: entry.points, total: entry.total, color: COLORS[i % COLORS.length] as string }));
  if (explorer.other) shown.push({ label: explorer.other.label, points: explorer.other.points, total: explorer.other.total, color: OTHER_COLOR });
  return shown;
}

/**
 * The explorer's time series (uPlot on a canvas, times in the viewer's zone). The canvas is a
 * picture: the same numbers are in the table below it, which is what screen readers and
 * keyboards use.
 */
export function Chart({ explorer, label }: { explorer: Explorer; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const shown = shownSeries(explorer);
    const money = explorer.unit === 'microUsd';
    const scale = (value: number) => (money ? value / 1e6 : value);
    const format = (value: number) => (money ? usd(value * 1e6) : count(value));
    const data: uPlot.AlignedData = [explorer.bucketStarts.map((ms) => ms / 1000), ...shown.map((entry) => entry.points.map(scale))];
    // Day and month buckets are UTC days and months (as caps count them): named as such, one tick
    // per bucket or every few (as many as fit, 64 px each), never as a local midnight that falls
    // on the day before.
    const calendar = explorer.granularity === 'H' ? undefined : new Intl.DateTimeFormat('en-US', explorer.granularity === 'D' ? { month: 'short', day: 'numeric', timeZone: 'UTC' } : { month: 'short', year: 'numeric', timeZone: 'UTC' });
    const bucketName = (seconds: number | null) => (seconds === null || !calendar ? '–' : calendar.format(seconds * 1000));
    const plot = new uPlot(
      {
        width: Math.max(280, element.clientWidth),
        height: HEIGHT,
        series: [
          calendar ? { value: (_plot: uPlot, seconds: number | null) => bucketName(seconds) } : {},
          ...shown.map((entry) => ({
            label: entry.label,
            stroke: entry.color,
            fill: `${entry.color}1a`,
            width: 2,
            points: { show: explorer.buckets.length <= 60 },
            value: (_plot: uPlot, value: number | null) => (value === null ? '–' : format(value)),
          })),
        ],
        axes: [
          calendar
            ? { stroke: '#444', splits: (plot: uPlot) => {
                const step = Math.max(1, Math.ceil(explorer.buckets.length / Math.max(2, Math.floor(plot.width / 64))));
                return explorer.bucketStarts.filter((_, i) => i % step === 0).map((ms) => ms / 1000);
              }, values: (_plot: uPlot, ticks: number[]) => ticks.map(bucketName) }
            : { stroke: '#444' },
          { stroke: '#444', size: money ? 88 : 64, values: (_plot: uPlot, ticks: number[]) => ticks.map((tick) => (money ? axisDollars(tick) : count(tick))) },
        ],
        scales: { x: { time: true }, y: { range: (_plot: uPlot, min: number, max: number) => [0, max > 0 ? max * 1.1 : 1] } },
        legend: { live: true },
      },
      data,
      element,
    );
    const observer = new ResizeObserver(() => plot.setSize({ width: Math.max(280, element.clientWidth), height: HEIGHT }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [explorer]);
  return html`<figure class="chart"><div ref=${box} class="chart-box" role="img" aria-label=${label}></div><figcaption>${label}. The same numbers are in the table below.</figcaption></figure>`;
}
