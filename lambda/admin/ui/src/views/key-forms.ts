import { useState } from 'preact/hooks';
import { parseUsd, usd } from '../format.ts';
import { html } from '../html.ts';
import type { KeyLimits, KeyView } from '../types.ts';

/**
 * The key form's fields: what `keys create` and `keys update` take, as inputs. Dollar budgets
 * are typed in dollars and sent as micro-dollars; an emptied field removes a limit.
 */
export const LIMIT_FIELDS: { name: keyof KeyLimits; label: string; dollars?: boolean; hint: string }[] = [
  { name: 'requestsPerMinute', label: 'Requests per minute', hint: 'across every instance' },
  { name: 'tokensPerDay', label: 'Tokens per UTC day', hint: 'input, output, cache read and write' },
  { name: 'tokensPerMonth', label: 'Tokens per UTC month', hint: '' },
  { name: 'maxOutputTokens', label: 'Output token ceiling', hint: 'larger max_tokens are clamped' },
  { name: 'microUsdPerDay', label: 'Spend per UTC day (US$)', dollars: true, hint: 'e.g. 25 or 0.50' },
  { name: 'microUsdPerMonth', label: 'Spend per UTC month (US$)', dollars: true, hint: '' },
  { name: 'maxInFlight', label: 'Requests in progress at once', hint: 'default 10 for keys with a budget' },
];

export const EXPIRIES: Record<string, { label: string; seconds: number | null }> = {
  keep: { label: 'Keep as it is', seconds: null },
  never: { label: 'Never', seconds: null },
  '7d': { label: 'In 7 days', seconds: 7 * 86_400 },
  '30d': { label: 'In 30 days', seconds: 30 * 86_400 },
  '90d': { label: 'In 90 days', seconds: 90 * 86_400 },
  '365d': { label: 'In a year', seconds: 365 * 86_400 },
};

export interface KeyFormValues {
  name: string;
  models: string;
  expiry: string;
  limits: Record<string, string>;
  owner: string;
  role: string;
}

export function formValues(key?: KeyView): KeyFormValues {
  const limits: Record<string, string> = {};
  for (const field of LIMIT_FIELDS) {
    const value = key?.limits?.[field.name];
    if (value !== undefined) limits[field.name] = field.dollars ? usd(value).replace(/^\$|\s*USD$/g, '').replace(/,/g, '') : String(value);
  }
  return { name: key?.name ?? '', models: key?.models?.join(', ') ?? '', expiry: key ? 'keep' : 'never', limits, owner: key?.owner ?? '', role: key?.role ?? '' };
}

/** The form's values as the API's body; a problem said with its field. */
export function requestBody(values: KeyFormValues, editing: KeyView | undefined): { body: Record<string, unknown> } | { problem: string; field: string } {
  const body: Record<string, unknown> = {};
  const name = values.name.trim();
  if (!name) return { problem: 'Give the key a name.', field: 'key-name' };
  if (!editing || name !== editing.name) body.name = name;
  const models = values.models.split(',').map((model) => model.trim()).filter(Boolean);
  if (!editing) {
    if (models.length > 0) body.models = models;
  } else if (models.join(',') !== (editing.models ?? []).join(',')) body.models = models.length > 0 ? models : null;
  const expiry = EXPIRIES[values.expiry];
  if (values.expiry !== 'keep' && expiry) {
    if (expiry.seconds !== null) body.expiresInSeconds = expiry.seconds;
    else if (editing) body.expiresInSeconds = null;
  }
  const limits: Record<string, number | null> = {};
  for (const field of LIMIT_FIELDS) {
    const text = (values.limits[field.name] ?? '').trim();
    const had = editing?.limits?.[field.name];
    if (text === '') {
      if (had !== undefined) limits[field.name] = null;
      continue;
    }
    const value = field.dollars ? parseUsd(text) : /^\d+$/.test(text) && Number(text) >= 1 ? Number(text) : undefined;
    if (value === undefined) return { problem: `${field.label}: ${field.dollars ? 'an amount in US dollars above 0, at most 6 decimals' : 'a whole number above 0'}.`, field: `limit-${field.name}` };
    if (value !== had) limits[field.name] = value;
  }
  if (Object.keys(limits).length > 0) body.limits = editing ? limits : Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== null));
  if (!editing) {
    if (values.owner.trim()) body.owner = values.owner.trim();
    if (values.role) body.role = values.role;
  }
  return { body };
}

export function KeyForm({ editing, signIn, busy, problem, onSubmit, onCancel }: { editing?: KeyView; signIn: boolean; busy: boolean; problem?: string; onSubmit: (values: KeyFormValues) => void; onCancel: () => void }) {
  const [values, setValues] = useState<KeyFormValues>(() => formValues(editing));
  const set = (name: keyof KeyFormValues) => (event: Event) => setValues({ ...values, [name]: (event.target as HTMLInputElement).value });
  const setLimit = (name: string) => (event: Event) => setValues({ ...values, limits: { ...values.limits, [name]: (event.target as HTMLInputElement).value } });
  return html`<form class="stack" onSubmit=${(event: Event) => (event.preventDefault(), onSubmit(values))}>
    ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
    <div class="field"><label for="key-name">Name</label><input id="key-name" required maxlength="200" autocomplete="off" value=${values.name} onInput=${set('name')} /></div>
    <div class="field"><label for="key-models">Models <span class="hint">names or globs, separated by commas; empty: any model</span></label><input id="key-models" autocomplete="off" placeholder="claude-sonnet-*, gpt-5*" value=${values.models} onInput=${set('models')} /></div>
    <div class="field"><label for="key-expiry">Expires</label><select id="key-expiry" value=${values.expiry} onChange=${set('expiry')}>
      ${Object.entries(EXPIRIES).filter(([name]) => editing || name !== 'keep').map(([name, expiry]) => html`<option value=${name}>${expiry.label}</option>`)}
    </select></div>
    <fieldset><legend>Limits <span class="hint">empty: no limit</span></legend><div class="grid">
      ${LIMIT_FIELDS.map(
        (field) => html`<div class="field"><label for=${`limit-${field.name}`}>${field.label}${field.hint ? html` <span class="hint">${field.hint}</span>` : null}</label><input id=${`limit-${field.name}`} inputmode=${field.dollars ? 'decimal' : 'numeric'} autocomplete="off" value=${values.limits[field.name] ?? ''} onInput=${setLimit(field.name)} /></div>`,
      )}
    </div></fieldset>
    ${editing
      ? null
      : html`${signIn ? html`<div class="field"><label for="key-owner">Owner <span class="hint">email or subject of someone who signed in: the key then acts for them, under their caps</span></label><input id="key-owner" autocomplete="off" value=${values.owner} onInput=${set('owner')} /></div>` : null}
        <div class="field"><label for="key-role">Admin API access</label><select id="key-role" value=${values.role} onChange=${set('role')}>
          <option value="">None (a key for clients)</option><option value="viewer">Viewer: may read the admin API</option><option value="admin">Admin: may change keys and people</option>
        </select></div>`}
    <div class="actions"><button type="submit" class="primary" disabled=${busy}>${editing ? 'Save changes' : 'Create key'}</button><button type="button" onClick=${onCancel}>Cancel</button></div>
  </form>`;
}
