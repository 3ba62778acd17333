import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api.ts';
import { Dialog, Empty, ErrorNote, Loading, Money, Scroll, Time } from '../components.ts';
import { html } from '../html.ts';
import type { PersonDetail, PersonRow, Session } from '../types.ts';
import { PersonPolicyView } from './person-policy.ts';

/** People who signed in with the IdP: groups, spend, effective models and caps, sessions; an admin sets their own caps and can end their access. */
function Details({ sub, admin, onClose, announce }: { sub: string; admin: boolean; onClose: () => void; announce: (text: string) => void }) {
  const [person, setPerson] = useState<PersonDetail | undefined>();
  const [error, setError] = useState<unknown>();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const load = () => api.get<PersonDetail>(`/people/${encodeURIComponent(sub)}`).then(setPerson, setError);
  useEffect(() => void load(), [sub]);
  const revoke = async () => {
    setBusy(true);
    try {
      const result = await api.post<{ sessionsEnded: string[]; keysRevoked: string[] }>(`/people/${encodeURIComponent(sub)}/revoke`);
      announce(`Ended ${result.sessionsEnded.length} session(s) and revoked ${result.keysRevoked.length} key(s).`);
      setConfirming(false);
      await load();
    } catch (failure) {
      setError(failure instanceof ApiError ? failure : String(failure));
    } finally {
      setBusy(false);
    }
  };
  const who = person ? (person.email ?? person.name ?? person.sub) : sub;
  return html`<${Dialog} title=${who} onClose=${onClose}>
    <${ErrorNote} error=${error} />
    ${!person && !error ? html`<${Loading} />` : null}
    ${person
      ? html`<dl class="facts"><dt>Subject</dt><dd><code>${person.sub}</code></dd><dt>Name</dt><dd>${person.name ?? '–'}</dd><dt>Groups</dt><dd>${person.groups.length > 0 ? person.groups.join(', ') : 'none'}</dd><dt>Active sessions</dt><dd>${person.activeSessions}</dd></dl>
        <${PersonPolicyView} sub=${sub} who=${who} policy=${person.policy} admin=${admin} onSaved=${(policy: PersonDetail['policy'], text: string) => (setPerson({ ...person, policy }), announce(text))} />
        ${person.sessions.length === 0
          ? html`<p class="muted">No sessions.</p>`
          : html`<${Scroll} label="Sessions"><table><caption>Sessions</caption><thead><tr><th scope="col">Client</th><th scope="col">From</th><th scope="col">Signed in</th><th scope="col">Ends</th><th scope="col">Revoked</th></tr></thead>
            <tbody>${person.sessions.map((session) => html`<tr><th scope="row">${session.surface}</th><td>${session.ip}</td><td><${Time} iso=${session.createdAt} /></td><td><${Time} iso=${session.endsAt} /></td><td>${session.revokedAt ? html`<${Time} iso=${session.revokedAt} />` : '–'}</td></tr>`)}</tbody></table><//>`}
        ${admin
          ? confirming
            ? html`<div class="stack"><p>End every session of ${who} (their clients and console) and revoke the keys tied to them? They can sign in again while the identity provider lets them.</p><div class="actions"><button type="button" class="danger" disabled=${busy} onClick=${revoke}>End access now</button><button type="button" onClick=${() => setConfirming(false)}>Cancel</button></div></div>`
            : html`<p><button type="button" class="danger" onClick=${() => setConfirming(true)}>Revoke sessions and keys…</button></p>`
          : null}`
      : null}
  <//>`;
}

export function PeopleView({ session, announce }: { session: Session; announce: (text: string) => void }) {
  const [people, setPeople] = useState<PersonRow[] | undefined>();
  const [error, setError] = useState<unknown>();
  const [open, setOpen] = useState<string | undefined>();
  const [filter, setFilter] = useState('');
  useEffect(() => {
    if (session.features.signIn) api.get<{ people: PersonRow[] }>('/people').then((answer) => setPeople(answer.people), setError);
  }, []);
  if (!session.features.signIn) {
    return html`<${Empty} title="Sign-in is not configured."><p>People appear here once they sign in with your identity provider. Add an <code>identity</code> block to the gateway's config (docs/sign-in.md); until then, keys are the only way in.</p><//>`;
  }
  if (error) return html`<${ErrorNote} error=${error} />`;
  if (!people) return html`<${Loading} />`;
  if (people.length === 0) return html`<${Empty} title="Nobody has signed in yet."><p>People appear here after their first sign-in: Claude Code's <code>/login</code>, or the login helper (docs/sign-in.md).</p><//>`;
  const text = filter.trim().toLowerCase();
  const shown = text ? people.filter((person) => [person.email ?? '', person.name ?? '', person.sub, ...person.groups].some((field) => field.toLowerCase().includes(text))) : people;
  return html`
    <form class="controls" role="search" onSubmit=${(event: Event) => event.preventDefault()}><div class="field"><label for="people-q">Filter by email, name, subject or group</label><input id="people-q" type="search" value=${filter} onInput=${(event: Event) => setFilter((event.target as HTMLInputElement).value)} /></div></form>
    <${Scroll} label="People"><table>
      <caption>People who signed in (${shown.length} of ${people.length})</caption>
      <thead><tr><th scope="col">Person</th><th scope="col">Groups</th><th scope="col">Last seen</th><th scope="col" class="num">Spend today</th><th scope="col" class="num">This week</th><th scope="col" class="num">This month</th><th scope="col">Details</th></tr></thead>
      <tbody>${shown.map(
        (person) => html`<tr><th scope="row"><span class="name">${person.email ?? person.name ?? person.sub}</span>${person.email && person.name ? html`<br /><span class="muted small">${person.name}</span>` : null}</th>
          <td>${person.groups.join(', ') || '–'}</td><td><${Time} iso=${person.lastSeenAt} /></td>
          <td class="num"><${Money} micro=${person.spendMicroUsd.day} /></td><td class="num"><${Money} micro=${person.spendMicroUsd.week} /></td><td class="num"><${Money} micro=${person.spendMicroUsd.month} /></td>
          <td><button type="button" onClick=${() => setOpen(person.sub)} aria-label=${`Details of ${person.email ?? person.sub}`}>Details</button></td></tr>`,
      )}</tbody></table><//>
    ${open ? html`<${Details} sub=${open} admin=${session.role === 'admin'} onClose=${() => setOpen(undefined)} announce=${announce} />` : null}`;
}
