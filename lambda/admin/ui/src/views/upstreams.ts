import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Empty, ErrorNote, Loading, Scroll, Time } from '../components.ts';
import { count, duration, percent } from '../format.ts';
import { html } from '../html.ts';
import type { UpstreamsView } from '../types.ts';
import { Freshness } from './overview.ts';

/** Upstreams: every instance's traffic (rollups, last 24 hours) and what the answering instance knows of their health. */
export function UpstreamsViewPage() {
  const [data, setData] = useState<UpstreamsView | undefined>();
  const [error, setError] = useState<unknown>();
  useEffect(() => void api.get<UpstreamsView>('/upstreams').then(setData, setError), []);
  if (error) return html`<${ErrorNote} error=${error} />`;
  if (!data) return html`<${Loading} />`;
  if (data.upstreams.length === 0) return html`<${Empty} title="No upstreams are configured."><p>Add upstreams and routes to the routing config (docs/routing.md).</p><//>`;
  return html`
    <section aria-labelledby="all-instances"><h2 id="all-instances">All instances, last 24 hours</h2>
      ${data.window.available ? html`<${Freshness} asOf=${data.window.asOf} live=${data.window.live} />` : html`<p class="muted">No usage rollups on this gateway (no stats table).</p>`}
      <${Scroll} label="Upstream traffic"><table>
        <caption>Requests answered by each upstream (a request counts where it was finally answered)</caption>
        <thead><tr><th scope="col">Upstream</th><th scope="col">Type · host</th><th scope="col" class="num">Requests</th><th scope="col" class="num">Errors</th><th scope="col" class="num">Fallbacks taken</th><th scope="col" class="num">First byte p50</th><th scope="col" class="num">p99</th></tr></thead>
        <tbody>${data.upstreams.map((upstream) => {
          const used = upstream.last24h;
          return html`<tr><th scope="row"><span class="name">${upstream.name}</span></th><td>${upstream.type} · ${upstream.host || '–'}</td>
            <td class="num">${used ? count(used.requests) : '0'}</td><td class="num">${used ? `${count(used.errors)} (${percent(used.errorRate)})` : '0'}</td><td class="num">${used ? count(used.fallbacks) : '0'}</td>
            <td class="num">${duration(used?.ttfbP50Ms)}</td><td class="num">${duration(used?.ttfbP99Ms)}</td></tr>`;
        })}</tbody></table><//>
      <p class="muted small">Fallbacks taken: requests this upstream answered after another target or key had failed.</p>
    </section>
    <section aria-labelledby="this-instance"><h2 id="this-instance">Health as this instance sees it</h2>
      <p class="muted">Each gateway instance learns on its own, from its own requests, since it started (<${Time} iso=${data.instance.startedAt} />). On AWS another instance may see otherwise; npm start is one instance.</p>
      <${Scroll} label="Upstream health"><table>
        <caption>Cooldowns and resting keys</caption>
        <thead><tr><th scope="col">Upstream</th><th scope="col">API keys</th><th scope="col">Targets that failed</th><th scope="col">Keys resting</th></tr></thead>
        <tbody>${data.upstreams.map(
          (upstream) => html`<tr><th scope="row"><span class="name">${upstream.name}</span></th><td>${upstream.keys}</td>
            <td>${upstream.instance.targets.length === 0 ? 'healthy' : upstream.instance.targets.map((target) => html`<div><span class="name">${target.model}</span>: ${target.failures} failure(s)${target.coolingDownUntil ? html`, cooling down until <${Time} iso=${target.coolingDownUntil} seconds />` : ''}</div>`)}</td>
            <td>${upstream.instance.restingKeys.length === 0 ? 'none' : upstream.instance.restingKeys.map((key) => html`<div>key ${key.index + 1} until <${Time} iso=${key.until} seconds /></div>`)}</td></tr>`,
        )}</tbody></table><//>
    </section>`;
}
