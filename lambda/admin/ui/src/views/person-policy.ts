import { useState } from 'preact/hooks';
import { api, ApiError } from '../api.ts';
import { Money, Scroll, Time } from '../components.ts';
import { parseUsd, usdAmount } from '../format.ts';
import { html } from '../html.ts';
import type { CapChange, PersonPolicy } from '../types.ts';

/**
 * A person's effective models and caps, each with where it comes from (as `keys people show`
 * says it), and, for admins, their own caps (as `keys people set-caps` sets them: dollars, no
 * cap, or back to their groups' or the default).
 */
const PERIODS = [
  { period: 'day', name: 'daily', label: 'Daily', words: 'per UTC day' },
  { period: 'week', name: 'weekly', label: 'Weekly', words: 'per week from Monday, UTC' },
  { period: 'month', name: 'monthly', label: 'Monthly', words: 'per UTC month' },
] as const;

type Mode = 'inherit' | 'none' | 'own';
type CapForm = Record<(typeof PERIODS)[number]['name'], { mode: Mode; amount: string }>;

function source(cap: PersonPolicy['caps'][number]): string {
  const from = cap.source;
  if (from.from === 'group') return `group ${from.group}`;
  return { person: 'own cap', default: 'organization default', none: 'nothing sets one' }[from.from];
}

/** The form's starting values: each period's own cap, else inherit. */
function formOf(policy: PersonPolicy): CapForm {
  const form = {} as CapForm;
  for (const { period, name } of PERIODS) {
    const cap = policy.caps.find((entry) => entry.period === period);
    const own = cap?.source.from === 'person';
    form[name] = { mode: !own ? 'inherit' : cap?.limitUsd === null ? 'none' : 'own', amount: own && cap?.limitUsd !== null && cap?.limitUsd !== undefined ? String(cap.limitUsd) : '' };
  }
  return form;
}

/** The changed periods as the API's body, or the first problem with its field. */
function changes(form: CapForm, start: CapForm): { body: Record<string, CapChange> } | { problem: string; field: string } {
  const body: Record<string, CapChange> = {};
  for (const { name, label } of PERIODS) {
    const { mode, amount } = form[name];
    let value: CapChange = mode === 'inherit' ? 'inherit' : null;
    if (mode === 'own') {
      const micro = amount.trim() === '0' ? 0 : parseUsd(amount);
      if (micro === undefined) return { problem: `${label} cap: an amount in US dollars, 0 or more, at most 6 decimals.`, field: `cap-${name}` };
      value = micro / 1e6;
    }
    const was = start[name];
    if (mode !== was.mode || (mode === 'own' && value !== Number(was.amount))) body[name] = value;
  }
  return { body };
}

function CapsForm({ sub, policy, onSaved }: { sub: string; policy: PersonPolicy; onSaved: (policy: PersonPolicy, text: string) => void }) {
  const start = formOf(policy);
  const [form, setForm] = useState<CapForm>(start);
  const [problem, setProblem] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const set = (name: keyof CapForm, field: 'mode' | 'amount') => (event: Event) => setForm({ ...form, [name]: { ...form[name], [field]: (event.target as HTMLInputElement).value } });
  const submit = async (event: Event) => {
    event.preventDefault();
    const result = changes(form, start);
    if ('problem' in result) {
      setProblem(result.problem);
      document.getElementById(result.field)?.focus();
      return;
    }
    if (Object.keys(result.body).length === 0) return setProblem('Nothing changed.');
    setBusy(true);
    try {
      const answer = await api.patch<{ policy: PersonPolicy }>(`/people/${encodeURIComponent(sub)}`, result.body);
      setProblem(undefined);
      onSaved(answer.policy, 'Own caps saved. Running gateways apply them within GATEWAY_SESSION_CACHE_SECONDS.');
    } catch (failure) {
      setProblem(failure instanceof ApiError ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="stack" onSubmit=${submit}>
    <fieldset><legend>Own caps <span class="hint">US dollars; they win over groups and the default</span></legend>
      ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
      <div class="grid">${PERIODS.map(
        ({ name, label, words }) => html`<div class="field"><label for=${`cap-${name}-mode`}>${label} cap <span class="hint">${words}</span></label>
          <select id=${`cap-${name}-mode`} value=${form[name].mode} onChange=${set(name, 'mode')}><option value="inherit">Inherit (group or default)</option><option value="none">No cap</option><option value="own">Own cap in US$</option></select>
          ${form[name].mode === 'own' ? html`<label for=${`cap-${name}`} class="visually-hidden">${label} cap in US dollars</label><input id=${`cap-${name}`} inputmode="decimal" autocomplete="off" placeholder="e.g. 25 or 12.50" value=${form[name].amount} onInput=${set(name, 'amount')} />` : null}
        </div>`,
      )}</div>
    </fieldset>
    <div class="actions"><button type="submit" class="primary" disabled=${busy}>Save caps</button></div>
  </form>`;
}

export function PersonPolicyView({ sub, who, policy, admin, onSaved }: { sub: string; who: string; policy: PersonPolicy; admin: boolean; onSaved: (policy: PersonPolicy, text: string) => void }) {
  const capped = policy.caps.some((cap) => cap.limitUsd !== null);
  // Said here too: the page's own notice sits behind the dialog.
  const [note, setNote] = useState<string | undefined>();
  const saved = (next: PersonPolicy, text: string) => {
    setNote(text);
    onSaved(next, text);
  };
  return html`<h3>Models and caps</h3>
    <dl class="facts"><dt>Models</dt><dd>${policy.models ? policy.models.join(', ') : 'any the gateway routes'}</dd>
      ${policy.pools.length > 0 ? html`<dt>Group pools</dt><dd>${policy.pools.map((pool) => `${pool.group}: ${usdAmount(pool.monthlyUsd)} a month`).join('; ')}</dd>` : null}
      ${policy.overridesBy ? html`<dt>Own caps set by</dt><dd>${policy.overridesBy.by}${policy.overridesBy.at ? html`, <${Time} iso=${policy.overridesBy.at} />` : null}</dd>` : null}</dl>
    ${capped ? null : html`<p class="empty">No cap limits ${who}'s spend: nothing in <code>identity.caps</code> applies to them${admin ? ', and they have no own caps. Set one below' : ''}.</p>`}
    <${Scroll} label="Effective caps"><table><caption>Effective caps</caption>
      <thead><tr><th scope="col">Period</th><th scope="col" class="num">Cap</th><th scope="col">From</th><th scope="col" class="num">Spent</th><th scope="col">Resets</th></tr></thead>
      <tbody>${policy.caps.map((cap) => {
        const period = PERIODS.find((entry) => entry.period === cap.period);
        return html`<tr><th scope="row">${period?.label ?? cap.period}</th><td class="num">${cap.limitUsd === null ? 'no cap' : html`<${Money} micro=${Math.round(cap.limitUsd * 1e6)} />`}</td><td>${source(cap)}</td>
          <td class="num">${policy.spendKnown ? html`<${Money} micro=${Math.round(cap.spentUsd * 1e6)} />` : 'not known'}</td><td><${Time} iso=${cap.resetsAt} /></td></tr>`;
      })}</tbody></table><//>
    ${note ? html`<p class="notice" role="status">${note}</p>` : null}
    ${admin ? html`<${CapsForm} key=${JSON.stringify(policy.caps)} sub=${sub} policy=${policy} onSaved=${saved} />` : null}`;
}
