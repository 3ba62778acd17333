import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, setCsrf, whenSignedOut } from './api.ts';
import { ErrorNote, Loading } from './components.ts';
import { html } from './html.ts';
import type { Session } from './types.ts';
import { AuditView } from './views/audit.ts';
import { ExplorerView } from './views/explorer.ts';
import { KeysView } from './views/keys.ts';
import { OverviewView } from './views/overview.ts';
import { PeopleView } from './views/people.ts';
import { UpstreamsViewPage } from './views/upstreams.ts';

/**
 * The console page: a few views over the admin API (docs/console.md), routed by the address's
 * hash (#/keys, #/spend?metric=…), keyboard first, readable at phone width.
 */
const VIEWS = [
  { id: 'overview', title: 'Overview' },
  { id: 'spend', title: 'Spend' },
  { id: 'keys', title: 'Keys' },
  { id: 'people', title: 'People' },
  { id: 'upstreams', title: 'Upstreams' },
  { id: 'audit', title: 'Audit trail' },
] as const;
type ViewId = (typeof VIEWS)[number]['id'];

function currentRoute(): { view: ViewId; params: URLSearchParams } {
  const [path = '', search = ''] = location.hash.replace(/^#\/?/, '').split('?');
  const view = (VIEWS.find((entry) => entry.id === path)?.id ?? 'overview') as ViewId;
  return { view, params: new URLSearchParams(search) };
}

function SignIn() {
  return html`<main id="main" class="narrow" tabindex="-1">
    <h1>Sign in to the gateway console</h1>
    <p><a class="button primary" href="/admin/login">Sign in with your identity provider</a></p>
    <p>No identity provider? On the gateway's machine run <code>npm run keys -- console-link</code> (for a deployed gateway add <code>--stack NAME</code>) and open the link it prints within 10 minutes.</p>
  </main>`;
}

function App() {
  const [session, setSession] = useState<Session | 'signed-out' | undefined>();
  const [failure, setFailure] = useState<unknown>();
  const [route, setRoute] = useState(currentRoute);
  const [notice, setNotice] = useState('');
  const main = useRef<HTMLElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const first = useRef(true);

  useEffect(() => {
    whenSignedOut(() => setSession('signed-out'));
    api.get<Session>('/session').then(
      (answer) => {
        setCsrf(answer.csrfToken);
        setSession(answer);
      },
      (error: unknown) => (error instanceof ApiError && error.status === 401 ? setSession('signed-out') : setFailure(error)),
    );
    const onHash = () => setRoute(currentRoute());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  const title = VIEWS.find((entry) => entry.id === route.view)?.title ?? 'Overview';
  useEffect(() => {
    document.title = `${title} · Agent gateway console`;
    // A new view: its heading takes the focus (and a screen reader reads it), not on first load.
    if (first.current) first.current = false;
    else heading.current?.focus();
    setNotice('');
  }, [route.view]);

  if (failure) return html`<main id="main" class="narrow"><h1>The console could not start</h1><${ErrorNote} error=${failure} /></main>`;
  if (session === undefined) return html`<main id="main" class="narrow"><${Loading} /></main>`;
  if (session === 'signed-out') return html`<${SignIn} />`;

  const navigate = (params: Record<string, string>) => (location.hash = `#/${route.view}?${new URLSearchParams(params)}`);
  const signOut = async () => {
    try {
      await api.post('/logout');
    } finally {
      setCsrf(undefined);
      setSession('signed-out');
    }
  };
  const skip = (event: Event) => {
    event.preventDefault();
    main.current?.focus();
  };
  const views: Record<ViewId, () => unknown> = {
    overview: () => html`<${OverviewView} />`,
    spend: () => html`<${ExplorerView} params=${route.params} navigate=${navigate} />`,
    keys: () => html`<${KeysView} session=${session} announce=${setNotice} />`,
    people: () => html`<${PeopleView} session=${session} announce=${setNotice} />`,
    upstreams: () => html`<${UpstreamsViewPage} />`,
    audit: () => (session.features.audit ? html`<${AuditView} />` : html`<p>This gateway keeps no audit trail (no identity table).</p>`),
  };
  return html`
    <a class="skip" href="#main" onClick=${skip}>Skip to content</a>
    <header class="top">
      <span class="brand">Agent gateway console</span>
      <nav aria-label="Console sections"><ul>
        ${VIEWS.map((entry) => html`<li><a href=${`#/${entry.id}`} aria-current=${entry.id === route.view ? 'page' : undefined}>${entry.title}</a></li>`)}
      </ul></nav>
      <div class="who"><span><span class="name">${session.actor.label}</span> · ${session.role}</span>${session.via === 'session' ? html`<button type="button" class="link" onClick=${signOut}>Sign out</button>` : null}</div>
    </header>
    <main id="main" ref=${main} tabindex="-1">
      <h1 ref=${heading} tabindex="-1">${title}</h1>
      ${session.role === 'viewer' ? html`<p class="muted">You are a viewer: you can look, not change.</p>` : null}
      <p class="visually-hidden" role="status" aria-live="polite">${notice}</p>
      ${notice ? html`<p class="notice" aria-hidden="true">${notice}</p>` : null}
      ${views[route.view]()}
    </main>`;
}

render(html`<${App} />`, document.getElementById('app') as HTMLElement);
