import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../api.ts';
import { Empty, ErrorNote, Loading, Scroll, Time } from '../components.ts';
import { html } from '../html.ts';
import type { AuditEvent } from '../types.ts';

/** The audit trail, a UTC day at a time, newest first. */
const TYPES: Record<string, string> = {
  sign_in: 'Signed in',
  sign_in_refused: 'Sign-in refused',
  device_denied: 'Device sign-in denied',
  refresh_failed: 'Refresh failed',
  refresh_reuse: 'Refresh token reused',
  session_revoked: 'Session ended',
  key_created: 'Key created',
  key_updated: 'Key changed',
  key_rotated: 'Key rotated',
  key_revoked: 'Key revoked',
  console_link_created: 'Console link made',
  console_signed_out: 'Signed out of the console',
  person_caps_changed: 'Caps changed',
};

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export function AuditView() {
  const [date, setDate] = useState(() => day(Date.now()));
  const [events, setEvents] = useState<AuditEvent[] | undefined>();
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const load = (more?: string) => {
    setError(undefined);
    api.get<{ events: AuditEvent[]; cursor: string | null }>(`/audit${query({ day: date, cursor: more })}`).then((page) => {
      setEvents((current) => (more ? [...(current ?? []), ...page.events] : page.events));
      setCursor(page.cursor);
    }, setError);
  };
  useEffect(() => {
    setEvents(undefined);
    load();
  }, [date]);
  const step = (days: number) => setDate(day(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000));
  return html`
    <form class="controls" onSubmit=${(event: Event) => event.preventDefault()} aria-label="Which day">
      <div class="field"><label for="audit-day">UTC day</label><input id="audit-day" type="date" value=${date} onChange=${(event: Event) => (event.target as HTMLInputElement).value && setDate((event.target as HTMLInputElement).value)} /></div>
      <div class="actions"><button type="button" onClick=${() => step(-1)}>Previous day</button><button type="button" onClick=${() => step(1)} disabled=${date >= day(Date.now())}>Next day</button></div>
    </form>
    <${ErrorNote} error=${error} />
    ${!events && !error ? html`<${Loading} />` : null}
    ${events && events.length === 0 ? html`<${Empty} title="Nothing happened on this day."><p>Sign-ins, refusals, revocations and every change made in the console or with the key CLI are kept here for 400 days. Try another day.</p><//>` : null}
    ${events && events.length > 0
      ? html`<${Scroll} label="Audit events"><table>
          <caption>Audit events on ${date} (UTC), newest first</caption>
          <thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Who</th><th scope="col">About</th><th scope="col">From</th><th scope="col">Details</th></tr></thead>
          <tbody>${events.map(
            (event) => html`<tr><th scope="row"><${Time} iso=${event.at} seconds /></th><td>${TYPES[event.type] ?? event.type}</td>
              <td>${event.actor ?? event.email ?? event.sub ?? '–'}</td>
              <td>${[event.key ? `key ${event.key}` : '', event.actor && (event.email || event.sub) ? (event.email ?? event.sub) : '', event.session ? `session ${event.session}` : '', event.surface ?? '', event.role ? `as ${event.role}` : ''].filter(Boolean).join(' · ') || '–'}</td>
              <td>${event.ip ?? '–'}</td><td class="detail">${[event.reason, event.detail, event.via].filter(Boolean).join(' · ')}</td></tr>`,
          )}</tbody></table><//>
        ${cursor ? html`<p><button type="button" onClick=${() => load(cursor)}>Load older events</button></p>` : null}`
      : null}`;
}
