import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, query } from '../api.ts';
import { Dialog, Empty, ErrorNote, Loading, Money, Scroll, Time } from '../components.ts';
import { count, usd } from '../format.ts';
import { html } from '../html.ts';
import type { IssuedKey, KeyView, Session } from '../types.ts';
import { KeyForm, LIMIT_FIELDS, requestBody, type KeyFormValues } from './key-forms.ts';

/**
 * Keys: the key CLI's list, create, update, rotate and revoke (the same operations server-side).
 * A new key is shown once, with a copy button and each client's setup.
 */
type Modal = { kind: 'create' } | { kind: 'edit'; key: KeyView } | { kind: 'rotate'; key: KeyView } | { kind: 'revoke'; key: KeyView } | { kind: 'issued'; issued: IssuedKey; rotated: boolean };

function limitsText(key: KeyView): string {
  const parts = LIMIT_FIELDS.flatMap((field) => {
    const value = key.limits?.[field.name];
    return value === undefined ? [] : [`${field.label.replace(/ \(US\$\)$/, '')}: ${field.dollars ? usd(value) : count(value)}`];
  });
  return parts.length > 0 ? parts.join('; ') : 'none';
}

function CopyField({ id, label, value }: { id: string; label: string; value: string }) {
  const [copied, setCopied] = useState<string>('');
  const input = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('Copied.');
    } catch {
      // No clipboard (an insecure origin, a denied permission): select it for Ctrl+C.
      input.current?.select();
      setCopied('Selected: press Ctrl+C (⌘C) to copy.');
    }
  };
  return html`<div class="field"><label for=${id}>${label}</label><div class="copy"><input id=${id} ref=${input} readonly value=${value} class="secret" onFocus=${(event: Event) => (event.target as HTMLInputElement).select()} /><button type="button" onClick=${copy}>Copy</button></div><p class="muted small" role="status">${copied}</p></div>`;
}

function Issued({ issued, rotated }: { issued: IssuedKey; rotated: boolean }) {
  const env = (vars: Record<string, string>) => Object.entries(vars).map(([name, value]) => `export ${name}=${value}`).join('\n');
  return html`<div class="stack">
    <p><strong>This key is shown only this once.</strong> Copy it now: the gateway keeps only its digest.${rotated && issued.previousWorksUntil ? html` The previous key keeps working until <${Time} iso=${issued.previousWorksUntil} />.` : null}</p>
    <${CopyField} id="issued-key" label=${`Key ${issued.id} (${issued.name})`} value=${issued.key} />
    <details><summary>Client setup</summary>
      <h3>Claude Code</h3><pre><code>${env(issued.setup.claudeCode.env)}${'\n'}claude</code></pre>
      <p class="small">Or for good, in a settings file of its own (${issued.setup.claudeCode.settingsPath}, readable by you only), used with <code>claude --settings ${issued.setup.claudeCode.settingsPath}</code>:</p><pre><code>${issued.setup.claudeCode.settingsJson}</code></pre>
      <h3>Codex CLI (${issued.setup.codex.profilePath})</h3><pre><code>${issued.setup.codex.profileToml}${'\n'}${env(issued.setup.codex.env)}${'\n'}codex --profile ${issued.setup.codex.profile}</code></pre>
      <h3>Anthropic SDK</h3><pre><code>${issued.setup.anthropicSdk}</code></pre>
      <h3>OpenAI SDK</h3><pre><code>${issued.setup.openaiSdk}</code></pre>
    </details>
  </div>`;
}

const OVERLAPS: Record<string, string> = { '3600': '1 hour', '86400': '24 hours', '604800': '7 days', '0': 'No overlap: it stops now' };

export function KeysView({ session, announce }: { session: Session; announce: (text: string) => void }) {
  const [filter, setFilter] = useState({ q: '', state: '' });
  const [typed, setTyped] = useState('');
  const [keys, setKeys] = useState<KeyView[] | undefined>();
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const [modal, setModal] = useState<Modal | undefined>();
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | undefined>();
  const [overlap, setOverlap] = useState('86400');
  const admin = session.role === 'admin';

  const load = (more?: string) => {
    setError(undefined);
    api.get<{ keys: KeyView[]; cursor: string | null }>(`/keys${query({ q: filter.q, state: filter.state, cursor: more })}`).then((page) => {
      setKeys((current) => (more ? [...(current ?? []), ...page.keys] : page.keys));
      setCursor(page.cursor);
    }, setError);
  };
  useEffect(() => load(), [filter.q, filter.state]);
  // Each list is a read of the key table: typing waits for a pause before it asks.
  useEffect(() => {
    const timer = setTimeout(() => setFilter((current) => (current.q === typed ? current : { ...current, q: typed })), 300);
    return () => clearTimeout(timer);
  }, [typed]);

  const close = () => {
    setModal(undefined);
    setProblem(undefined);
  };
  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setProblem(undefined);
    try {
      await work();
    } catch (failure) {
      setProblem(failure instanceof ApiError ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  };
  const submit = (editing: KeyView | undefined) => (values: KeyFormValues) => {
    const parsed = requestBody(values, editing);
    if ('problem' in parsed) {
      setProblem(parsed.problem);
      document.getElementById(parsed.field)?.focus();
      return;
    }
    void run(async () => {
      if (editing) {
        await api.patch(`/keys/${encodeURIComponent(editing.id)}`, parsed.body);
        announce(`Saved ${editing.name}.`);
        close();
      } else {
        const issued = await api.post<IssuedKey>('/keys', parsed.body);
        announce(`Created key ${issued.name}.`);
        setModal({ kind: 'issued', issued, rotated: false });
      }
      load();
    });
  };
  const rotate = (key: KeyView) =>
    run(async () => {
      const issued = await api.post<IssuedKey>(`/keys/${encodeURIComponent(key.id)}/rotate`, { overlapSeconds: Number(overlap) });
      announce(`Rotated ${key.name}.`);
      setModal({ kind: 'issued', issued, rotated: true });
      load();
    });
  const revoke = (key: KeyView) =>
    run(async () => {
      await api.post(`/keys/${encodeURIComponent(key.id)}/revoke`);
      announce(`Revoked ${key.name}.`);
      close();
      load();
    });

  return html`
    <div class="toolbar">
      <form class="controls" role="search" onSubmit=${(event: Event) => event.preventDefault()}>
        <div class="field"><label for="keys-q">Filter by name, id or owner</label><input id="keys-q" type="search" value=${typed} onInput=${(event: Event) => setTyped((event.target as HTMLInputElement).value)} /></div>
        <div class="field"><label for="keys-state">State</label><select id="keys-state" value=${filter.state} onChange=${(event: Event) => setFilter({ ...filter, state: (event.target as HTMLSelectElement).value })}>
          <option value="">Any</option><option value="active">Active</option><option value="expired">Expired</option><option value="revoked">Revoked</option><option value="malformed">Malformed</option>
        </select></div>
      </form>
      ${admin ? html`<button type="button" class="primary" onClick=${() => setModal({ kind: 'create' })}>New key</button>` : null}
    </div>
    <${ErrorNote} error=${error} />
    ${!keys && !error ? html`<${Loading} />` : null}
    ${keys && keys.length === 0
      ? html`<${Empty} title=${filter.q || filter.state ? 'No key matches.' : 'No keys yet.'}>${admin ? html`<p>Create one with <strong>New key</strong>, or with <code>npm run keys -- create --name NAME</code>.</p>` : html`<p>An admin creates keys here or with <code>npm run keys -- create</code>.</p>`}<//>`
      : null}
    ${keys && keys.length > 0
      ? html`<${Scroll} label="Keys"><table>
          <caption>Keys${cursor ? ' (more below)' : ''}</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">State</th><th scope="col">Models</th><th scope="col">Limits</th><th scope="col">Owner · role</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col" class="num">Spend this month</th>${admin ? html`<th scope="col">Actions</th>` : null}</tr></thead>
          <tbody>${keys.map(
            (key) => html`<tr>
              <th scope="row"><span class="name">${key.name}</span><br /><code class="small">${key.id}</code></th>
              <td><span class=${`state state-${key.state}`}>${key.state}</span></td>
              <td>${key.models ? key.models.join(', ') : 'any'}</td>
              <td class="limits">${key.malformed ? html`<span class="error-text">refused: ${key.malformed.join(', ')}</span>` : limitsText(key)}</td>
              <td>${key.owner ?? '–'}${key.role ? html` · <strong>${key.role}</strong>` : null}</td>
              <td><${Time} iso=${key.createdAt} /></td>
              <td><${Time} iso=${key.lastUsedAt} /></td>
              <td class="num"><${Money} micro=${key.costThisMonthMicroUsd} /></td>
              ${admin
                ? html`<td class="row-actions">${key.state === 'active' || key.state === 'expired'
                    ? html`<button type="button" onClick=${() => setModal({ kind: 'edit', key })} aria-label=${`Edit ${key.name}`}>Edit</button><button type="button" onClick=${() => setModal({ kind: 'rotate', key })} aria-label=${`Rotate ${key.name}`}>Rotate</button>`
                    : null}${key.state !== 'revoked' ? html`<button type="button" class="danger" onClick=${() => setModal({ kind: 'revoke', key })} aria-label=${`Revoke ${key.name}`}>Revoke</button>` : null}</td>`
                : null}
            </tr>`,
          )}</tbody></table><//>
        ${cursor ? html`<p><button type="button" onClick=${() => load(cursor)}>Load more keys</button></p>` : null}`
      : null}
    ${modal?.kind === 'create' ? html`<${Dialog} title="New key" onClose=${close}><${KeyForm} signIn=${session.features.signIn} busy=${busy} problem=${problem} onSubmit=${submit(undefined)} onCancel=${close} /><//>` : null}
    ${modal?.kind === 'edit' ? html`<${Dialog} title=${`Edit ${modal.key.name}`} onClose=${close}><${KeyForm} editing=${modal.key} signIn=${session.features.signIn} busy=${busy} problem=${problem} onSubmit=${submit(modal.key)} onCancel=${close} /><//>` : null}
    ${modal?.kind === 'rotate'
      ? html`<${Dialog} title=${`Rotate ${modal.key.name}`} onClose=${close}><div class="stack">
          ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
          <p>A new key is made with the same settings; usage carries on under ${modal.key.id}.</p>
          <div class="field"><label for="rotate-overlap">The current key keeps working for</label><select id="rotate-overlap" value=${overlap} onChange=${(event: Event) => setOverlap((event.target as HTMLSelectElement).value)}>${Object.entries(OVERLAPS).map(([value, text]) => html`<option value=${value}>${text}</option>`)}</select></div>
          <div class="actions"><button type="button" class="primary" disabled=${busy} onClick=${() => rotate(modal.key)}>Rotate</button><button type="button" onClick=${close}>Cancel</button></div></div><//>`
      : null}
    ${modal?.kind === 'revoke'
      ? html`<${Dialog} title=${`Revoke ${modal.key.name}?`} onClose=${close}><div class="stack">
          ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
          <p>Clients using <code>${modal.key.id}</code> are refused from now on (instances that looked it up in the last few seconds accept it until their key cache expires). This cannot be undone.</p>
          <div class="actions"><button type="button" class="danger" disabled=${busy} onClick=${() => revoke(modal.key)}>Revoke the key</button><button type="button" onClick=${close}>Cancel</button></div></div><//>`
      : null}
    ${modal?.kind === 'issued' ? html`<${Dialog} title=${modal.rotated ? 'Rotated: the new key' : 'Your new key'} onClose=${close}><${Issued} issued=${modal.issued} rotated=${modal.rotated} /><div class="actions"><button type="button" class="primary" onClick=${close}>Done</button></div><//>` : null}`;
}
