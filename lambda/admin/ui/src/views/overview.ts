import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Empty, ErrorNote, Loading, Money, Scroll, Time } from '../components.ts';
import { count, duration, localTime, percent, usdAmount, utc } from '../format.ts';
import { html } from '../html.ts';
import type { Caps, Overview, PeriodNumbers, TopEntry } from '../types.ts';

const PERIOD_NAMES = { day: 'Today', week: 'This week', month: 'This month' } as const;
type Period = keyof typeof PERIOD_NAMES;

/** "As of 14:03" on AWS (the rollups lag 2 to 4 minutes), "live" on npm start. */
export function Freshness({ asOf, live }: { asOf: string | null; live: boolean }) {
  if (live || !asOf) return html`<p class="muted">Live: usage is written every second.</p>`;
  return html`<p class="muted">As of <time datetime=${asOf} title=${utc(asOf)}>${localTime(asOf)}</time> (usage reaches the console 2 to 4 minutes after it happens).</p>`;
}

function PeriodCard({ name, numbers }: { name: string; numbers: PeriodNumbers }) {
  return html`<section class="card" aria-labelledby=${`period-${name}`}>
    <h3 id=${`period-${name}`}>${name}</h3>
    <dl>
      <dt>Spend</dt><dd class="big"><${Money} micro=${numbers.costMicroUsd} /></dd>
      <dt>Requests</dt><dd>${count(numbers.requests)}</dd>
      <dt>Errors</dt><dd>${count(numbers.errors)} (${percent(numbers.errorRate)})</dd>
      <dt>Time to first byte</dt><dd>p50 ${duration(numbers.ttfbP50Ms)} · p99 ${duration(numbers.ttfbP99Ms)}</dd>
      <dt>Tokens</dt><dd>${count(numbers.inputTokens + numbers.cacheReadTokens + numbers.cacheWriteTokens + numbers.outputTokens)}</dd>
    </dl>
  </section>`;
}

function capsText(caps: Caps | null | undefined): string {
  const parts = (['daily', 'weekly', 'monthly'] as const).flatMap((period) => (caps?.[period] === undefined ? [] : [`${usdAmount(caps[period] as number)} ${period}`]));
  return parts.length > 0 ? parts.join(' · ') : 'none';
}

function CapsSection({ caps, month }: { caps: Overview['caps']; month: PeriodNumbers }) {
  if (!caps) {
    return html`<p>Caps apply to people who sign in with your identity provider (docs/sign-in.md): this gateway has none configured. Keys have their own budgets: see <a href="#/keys">Keys</a>.</p>`;
  }
  return html`<p>Each person's default cap: <strong>${capsText(caps.perPersonDefault)}</strong>${caps.perPersonDefault ? '' : ' (set identity.caps.default)'}. Spend this month across everyone: <${Money} micro=${month.costMicroUsd} />.</p>
    ${caps.pools.length === 0
      ? html`<p class="muted">No group pools are configured (identity.caps.pools).</p>`
      : html`<${Scroll} label="Group pools"><table>
          <caption>Group pools: budgets a whole group shares</caption>
          <thead><tr><th scope="col">Group</th><th scope="col">Cap</th><th scope="col" class="num">Spent today</th><th scope="col" class="num">This week</th><th scope="col" class="num">This month</th></tr></thead>
          <tbody>${caps.pools.map(
            (pool) => html`<tr><th scope="row">${pool.group}</th><td>${capsText(pool.caps)}</td><td class="num"><${Money} micro=${pool.spentMicroUsd.day} /></td><td class="num"><${Money} micro=${pool.spentMicroUsd.week} /></td><td class="num"><${Money} micro=${pool.spentMicroUsd.month} />${pool.caps.monthly ? html` <meter min="0" max=${pool.caps.monthly} value=${pool.spentMicroUsd.month / 1e6} aria-label=${`${pool.group}: share of the monthly pool spent`}></meter>` : null}</td></tr>`,
          )}</tbody></table><//>`}`;
}

const TOP_TITLES = { person: 'People', group: 'Groups', key: 'Keys', model: 'Models' } as const;

function TopTable({ dimension, entries }: { dimension: keyof typeof TOP_TITLES; entries: TopEntry[] }) {
  const title = TOP_TITLES[dimension];
  if (entries.length === 0) return html`<section class="card"><h3>${title}</h3><p class="muted">No usage in this period.</p></section>`;
  return html`<section class="card"><h3>${title}</h3><${Scroll} label=${`Top ${title.toLowerCase()}`}><table>
    <thead><tr><th scope="col">${title.replace(/s$/, '')}</th><th scope="col" class="num">Spend</th><th scope="col" class="num">Requests</th></tr></thead>
    <tbody>${entries.map(
      (entry) => html`<tr><th scope="row"><span class="name">${entry.label ?? entry.value}</span>${entry.label ? html`<br /><code class="muted small">${entry.value}</code>` : null}</th><td class="num"><${Money} micro=${entry.costMicroUsd} /></td><td class="num">${count(entry.requests)}</td></tr>`,
    )}</tbody></table><//></section>`;
}

export function OverviewView() {
  const [period, setPeriod] = useState<Period>('month');
  const [data, setData] = useState<Overview | undefined>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    setError(undefined);
    api.get<Overview>(`/overview?period=${period}`).then(setData, setError);
  }, [period]);
  if (error) return html`<${ErrorNote} error=${error} />`;
  if (!data) return html`<${Loading} />`;
  const nothing = data.periods.month.requests === 0 && data.periods.week.requests === 0;
  return html`
    <${Freshness} asOf=${data.asOf} live=${data.live} />
    <section aria-labelledby="traffic"><h2 id="traffic">Spend and traffic</h2>
      ${nothing
        ? html`<${Empty} title="No requests this month yet."><p>Send a request through the gateway with a key (see <a href="#/keys">Keys</a>) or a signed-in client, and it shows here within seconds (npm start) or 2 to 4 minutes (AWS).</p><//>`
        : null}
      <div class="cards">${(['day', 'week', 'month'] as const).map((name) => html`<${PeriodCard} name=${PERIOD_NAMES[name]} numbers=${data.periods[name]} />`)}</div>
      <p class="muted small">Weeks start on Monday and days at midnight, UTC, as caps and budgets do.</p>
    </section>
    <section aria-labelledby="caps"><h2 id="caps">Caps</h2><${CapsSection} caps=${data.caps} month=${data.periods.month} /></section>
    <section aria-labelledby="top"><h2 id="top">Top spenders</h2>
      <fieldset class="segmented"><legend>Period</legend>
        ${(['day', 'week', 'month'] as const).map(
          (name) => html`<label><input type="radio" name="top-period" value=${name} checked=${period === name} onChange=${() => setPeriod(name)} /> ${PERIOD_NAMES[name]}</label>`,
        )}
      </fieldset>
      <p class="muted small">Since <${Time} iso=${data.top.from} />.</p>
      <div class="cards">${(['person', 'group', 'key', 'model'] as const).map((dimension) => html`<${TopTable} dimension=${dimension} entries=${data.top[dimension]} />`)}</div>
    </section>`;
}
