import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../api.ts';
import { Chart, shownSeries } from '../chart.ts';
import { Empty, ErrorNote, Loading, Scroll } from '../components.ts';
import { bucketLabel, local, metricValue, utc } from '../format.ts';
import { html } from '../html.ts';
import type { Explorer } from '../types.ts';
import { Freshness } from './overview.ts';

/**
 * The spend explorer: one time series, a metric, a group-by, a range; the same numbers as a
 * table and as CSV. Its choices live in the address (#/spend?metric=…), so a view can be shared.
 */
export const METRIC_NAMES: Record<string, string> = {
  cost: 'Cost',
  tokens: 'Tokens (all kinds)',
  inputTokens: 'Input tokens',
  cacheReadTokens: 'Cache read tokens',
  cacheWriteTokens: 'Cache write tokens',
  outputTokens: 'Output tokens',
  requests: 'Requests',
  errors: 'Errors',
  fallbacks: 'Fallbacks taken',
};
const GROUPS: Record<string, string> = { none: 'Nothing (total)', person: 'Person', group: 'Group', key: 'Key', model: 'Model', upstream: 'Upstream' };
const RANGES: Record<string, { label: string; ms?: number }> = {
  '24h': { label: 'Last 24 hours', ms: 86_400_000 },
  '7d': { label: 'Last 7 days', ms: 7 * 86_400_000 },
  '30d': { label: 'Last 30 days', ms: 30 * 86_400_000 },
  '90d': { label: 'Last 90 days', ms: 90 * 86_400_000 },
  '12mo': { label: 'Last 12 months', ms: 365 * 86_400_000 },
  custom: { label: 'Chosen days' },
};
const BUCKETS: Record<string, string> = { auto: 'Automatic', hour: 'Hour', day: 'Day (UTC)', month: 'Month (UTC)' };
const GRANULARITY_NAMES = { H: 'hourly', D: 'daily', M: 'monthly' } as const;

export interface ExplorerChoice {
  metric: string;
  by: string;
  range: string;
  granularity: string;
  from?: string;
  to?: string;
}

export function choiceOf(params: URLSearchParams): ExplorerChoice {
  const pick = (name: string, allowed: Record<string, unknown>, fallback: string) => {
    const value = params.get(name) ?? fallback;
    return Object.hasOwn(allowed, value) ? value : fallback;
  };
  const choice: ExplorerChoice = { metric: pick('metric', METRIC_NAMES, 'cost'), by: pick('by', GROUPS, 'model'), range: pick('range', RANGES, '7d'), granularity: pick('granularity', BUCKETS, 'auto') };
  const day = /^\d{4}-\d{2}-\d{2}$/;
  if (day.test(params.get('from') ?? '')) choice.from = params.get('from') as string;
  if (day.test(params.get('to') ?? '')) choice.to = params.get('to') as string;
  return choice;
}

/** The API query of a choice: a preset range ends now; chosen days are whole UTC days. */
function apiQuery(choice: ExplorerChoice, now: number): Record<string, string> {
  const params: Record<string, string> = { metric: choice.metric, by: choice.by, granularity: choice.granularity };
  const preset = RANGES[choice.range]?.ms;
  if (preset !== undefined) {
    params.from = new Date(now - preset).toISOString();
    params.to = new Date(now).toISOString();
  } else {
    const today = new Date(now).toISOString().slice(0, 10);
    params.from = choice.from ?? today;
    params.to = `${choice.to ?? today}T23:59:59Z`;
  }
  return params;
}

function Select({ id, label, value, options, onChange }: { id: string; label: string; value: string; options: Record<string, string>; onChange: (value: string) => void }) {
  return html`<div class="field"><label for=${id}>${label}</label><select id=${id} value=${value} onChange=${(event: Event) => onChange((event.target as HTMLSelectElement).value)}>
    ${Object.entries(options).map(([name, text]) => html`<option value=${name}>${text}</option>`)}
  </select></div>`;
}

function Table({ explorer }: { explorer: Explorer }) {
  const shown = shownSeries(explorer);
  const value = (n: number) => metricValue(explorer.unit, n);
  const hours = explorer.granularity === 'H';
  return html`<${Scroll} label="The numbers of the chart"><table class="data">
    <caption>${METRIC_NAMES[explorer.metric]} per ${hours ? 'hour (your time zone)' : explorer.granularity === 'D' ? 'UTC day' : 'UTC month'}${explorer.by === 'none' ? '' : ` by ${GROUPS[explorer.by]?.toLowerCase()}`}</caption>
    <thead><tr><th scope="col">${hours ? 'Hour' : explorer.granularity === 'D' ? 'Day' : 'Month'}</th>${shown.map((entry) => html`<th scope="col" class="num"><span class="name">${entry.label}</span></th>`)}${shown.length > 1 ? html`<th scope="col" class="num">${explorer.total.label}</th>` : null}</tr></thead>
    <tbody>${explorer.buckets.map(
      (bucket, i) => html`<tr><th scope="row"><time datetime=${new Date(explorer.bucketStarts[i] as number).toISOString()} title=${utc(explorer.bucketStarts[i] as number)}>${bucketLabel(bucket, explorer.bucketStarts[i] as number)}</time></th>${shown.map((entry) => html`<td class="num">${value(entry.points[i] ?? 0)}</td>`)}${shown.length > 1 ? html`<td class="num">${value(explorer.total.points[i] ?? 0)}</td>` : null}</tr>`,
    )}</tbody>
    <tfoot><tr><th scope="row">Total</th>${shown.map((entry) => html`<td class="num">${value(entry.total)}</td>`)}${shown.length > 1 ? html`<td class="num">${value(explorer.total.total)}</td>` : null}</tr></tfoot>
  </table><//>`;
}

export function ExplorerView({ params, navigate }: { params: URLSearchParams; navigate: (params: Record<string, string>) => void }) {
  const choice = choiceOf(params);
  const [data, setData] = useState<Explorer | undefined>();
  const [error, setError] = useState<unknown>();
  const [now] = useState(() => Date.now());
  const search = query(apiQuery(choice, now));
  useEffect(() => {
    setError(undefined);
    setData(undefined);
    api.get<Explorer>(`/usage${search}`).then(setData, setError);
  }, [search]);
  const change = (name: keyof ExplorerChoice) => (value: string) => {
    const next: Record<string, string> = { metric: choice.metric, by: choice.by, range: choice.range, granularity: choice.granularity, ...(choice.from ? { from: choice.from } : {}), ...(choice.to ? { to: choice.to } : {}) };
    next[name] = value;
    if (name === 'range' && value === 'custom') {
      const today = new Date(now).toISOString().slice(0, 10);
      next.from ??= new Date(now - 13 * 86_400_000).toISOString().slice(0, 10);
      next.to ??= today;
    }
    navigate(next);
  };
  const dayInput = (name: 'from' | 'to', label: string) =>
    html`<div class="field"><label for=${`explorer-${name}`}>${label} (UTC day)</label><input id=${`explorer-${name}`} type="date" value=${choice[name] ?? ''} onChange=${(event: Event) => change(name)((event.target as HTMLInputElement).value)} /></div>`;
  const title = data ? `${METRIC_NAMES[data.metric]} ${data.by === 'none' ? '' : `by ${GROUPS[data.by]?.toLowerCase()}`}, ${GRANULARITY_NAMES[data.granularity]}, ${local(data.from)} to ${local(data.to)}` : '';
  return html`
    <form class="controls" onSubmit=${(event: Event) => event.preventDefault()} aria-label="What to show">
      <${Select} id="explorer-metric" label="Metric" value=${choice.metric} options=${METRIC_NAMES} onChange=${change('metric')} />
      <${Select} id="explorer-by" label="Group by" value=${choice.by} options=${GROUPS} onChange=${change('by')} />
      <${Select} id="explorer-range" label="Range" value=${choice.range} options=${Object.fromEntries(Object.entries(RANGES).map(([name, range]) => [name, range.label]))} onChange=${change('range')} />
      ${choice.range === 'custom' ? html`${dayInput('from', 'From')}${dayInput('to', 'To')}` : null}
      <${Select} id="explorer-granularity" label="Buckets" value=${choice.granularity} options=${BUCKETS} onChange=${change('granularity')} />
    </form>
    <${ErrorNote} error=${error} />
    ${!data && !error ? html`<${Loading} />` : null}
    ${data
      ? html`<${Freshness} asOf=${data.asOf} live=${data.live} />
        ${data.total.total === 0 && data.series.every((entry) => entry.total === 0)
          ? html`<${Empty} title="No usage in this range."><p>Pick a longer range, or send a request through the gateway: it shows here within seconds (npm start) or 2 to 4 minutes (AWS).</p><//>`
          : html`<${Chart} explorer=${data} label=${title} />`}
        ${data.note ? html`<p class="muted small">${data.note}</p>` : null}
        ${data.other && data.other.count > 0 ? html`<p class="muted small">The ${data.series.length} shown are the largest over the whole ${data.granularity === 'H' ? 'days' : 'months'} the range touches; ${data.other.count} more are in "${data.other.label}".</p>` : null}
        <p><a class="button" href=${`/admin/api/usage${search}&format=csv`} download>Download CSV</a></p>
        <${Table} explorer=${data} />`
      : null}`;
}
