import { generateKeyPairSync, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import Provider from 'oidc-provider';

/**
 * A real, certified OpenID Provider (panva's `oidc-provider`) on 127.0.0.1, standing in for the
 * company IdP in tests: users with passwords and groups, a login form a browser (or a test's
 * scripted browser) fills in, consent granted by the organization (no consent screen), refresh
 * tokens for `offline_access` (with `prompt=consent`, as the spec and Google ask) that rotate,
 * and a refresh refused (`invalid_grant`) once a user is removed or disabled.
 *
 * The port is bound first, so the issuer is known before the gateway that uses it exists; the
 * gateway's redirect URI is allowed afterwards (`allowRedirect`).
 */
export interface TestUser {
  /** Login name and the ID token's `sub`. */
  sub: string;
  password: string;
  email: string;
  name?: string;
  groups: string[];
  disabled?: boolean;
}

export interface TestIdp {
  issuer: string;
  clientId: string;
  /** Undefined for a public client (PKCE only). */
  clientSecret: string | undefined;
  addUser(user: TestUser): void;
  removeUser(sub: string): void;
  setDisabled(sub: string, disabled: boolean): void;
  setGroups(sub: string, groups: string[]): void;
  /** An ID token signed with the IdP's own key: `iss`, `aud`, `iat`, `exp` filled in unless given (for tests of what the gateway refuses). */
  signIdToken(claims: Record<string, unknown>): Promise<string>;
  /** While down, the IdP answers every request 503 (an outage). */
  setDown(down: boolean): void;
  /** Registers a redirect URI of the client (the gateway's `<origin>/oauth/callback`). */
  allowRedirect(uri: string): Promise<void>;
  /** How many times each endpoint was called (`token`, `authorization`...; `token:basic` / `token:form`: how the client authenticated). */
  calls: Map<string, number>;
  /** Every secret the IdP has handed out (authorization codes, access and refresh tokens): what must never show up at the gateway's rest. */
  issuedSecrets(): string[];
  close(): Promise<void>;
}

export interface TestIdpOptions {
  /** `client_secret_basic` (default), `client_secret_post`, or `none` (a public client). */
  clientAuth?: 'client_secret_basic' | 'client_secret_post' | 'none';
  users?: TestUser[];
  /** Seconds an ID token / access token lives at the IdP. */
  tokenSeconds?: number;
}

export async function startTestIdp(options: TestIdpOptions = {}): Promise<TestIdp> {
  const users = new Map<string, TestUser>((options.users ?? []).map((user) => [user.sub, { ...user }]));
  const clientAuth = options.clientAuth ?? 'client_secret_basic';
  const clientId = `gateway-${randomUUID().slice(0, 8)}`;
  const clientSecret = clientAuth === 'none' ? undefined : `secret-${randomUUID()}`;
  const redirects = new Set<string>();
  const calls = new Map<string, number>();
  const store: IdpStore = new Map();
  let provider: Provider | undefined;
  let down = false;
  const server = http.createServer((req, res) => {
    if (!provider || down) return void res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"temporarily_unavailable"}');
    const path = new URL(req.url ?? '/', 'http://idp').pathname;
    const endpoint = path.split('/')[1] ?? '';
    calls.set(endpoint, (calls.get(endpoint) ?? 0) + 1);
    // How the client authenticated at the token endpoint: HTTP Basic, or in the form (or not at all).
    if (endpoint === 'token') calls.set(req.headers.authorization ? 'token:basic' : 'token:form', (calls.get(req.headers.authorization ? 'token:basic' : 'token:form') ?? 0) + 1);
    if (endpoint === 'interaction') return void interaction(provider, users, req, res).catch(() => res.writeHead(500).end('interaction failed'));
    provider.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const tokenSeconds = options.tokenSeconds ?? 3600;
  provider = new Provider(issuer, {
    adapter: memoryAdapter(store),
    findAccount: async (_ctx, sub) => {
      const user = users.get(sub);
      if (!user || user.disabled) return undefined;
      return { accountId: sub, claims: async () => ({ sub, email: user.email, email_verified: true, ...(user.name ? { name: user.name } : {}), groups: [...user.groups] }) };
    },
    // Groups travel with the profile scope, so the gateway's default scopes carry them.
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
    scopes: ['openid', 'offline_access', 'email', 'profile'],
    // ID tokens carry the scopes' claims (as most company IdPs configure them), not only `sub`.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, details) => `/interaction/${details.uid}` },
    pkce: { required: () => true },
    rotateRefreshToken: true,
    ttl: { AccessToken: tokenSeconds, IdToken: tokenSeconds, RefreshToken: 14 * 86_400, Grant: 14 * 86_400, Session: 86_400, Interaction: 600 },
    cookies: { keys: [randomUUID()] },
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'test-key', use: 'sig', alg: 'RS256' }] },
  });
  // oidc-provider requires https issuers unless told the proxy terminates TLS; loopback tests run plain http.
  provider.proxy = true;
  const register = () =>
    (provider as Provider).Client.adapter.upsert(clientId, {
      client_id: clientId,
      ...(clientSecret ? { client_secret: clientSecret } : {}),
      redirect_uris: [...redirects],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: clientAuth,
      application_type: 'web',
    });
  return {
    issuer,
    clientId,
    clientSecret,
    calls,
    issuedSecrets: () => [...store.keys()].filter((key) => /^(AuthorizationCode|AccessToken|RefreshToken):/.test(key)).map((key) => key.slice(key.indexOf(':') + 1)),
    setDown: (value) => void (down = value),
    signIdToken: (claims) => {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: issuer, aud: clientId, iat: now, exp: now + 300, ...claims }).setProtectedHeader({ alg: 'RS256', kid: 'test-key' }).sign(privateKey);
    },
    addUser: (user) => void users.set(user.sub, { ...user }),
    removeUser: (sub) => void users.delete(sub),
    setDisabled: (sub, disabled) => void Object.assign(users.get(sub) ?? {}, { disabled }),
    setGroups: (sub, groups) => void Object.assign(users.get(sub) ?? {}, { groups: [...groups] }),
    async allowRedirect(uri) {
      redirects.add(uri);
      await register();
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * The IdP's storage (grants, codes, tokens, sessions), one per IdP, in memory: oidc-provider's
 * own memory adapter is shared by every instance of a process and bounded to 1,000 entries.
 */
type IdpStore = Map<string, { payload: Record<string, unknown>; expires: number }>;

function memoryAdapter(store: IdpStore) {
  const live = (key: string) => {
    const entry = store.get(key);
    if (entry && entry.expires <= Date.now()) store.delete(key);
    return store.get(key)?.payload;
  };
  return class {
    readonly #model: string;
    constructor(model: string) {
      this.#model = model;
    }
    #key(id: string) {
      return `${this.#model}:${id}`;
    }
    async upsert(id: string, payload: Record<string, unknown>, expiresIn?: number) {
      store.set(this.#key(id), { payload: { ...payload }, expires: expiresIn ? Date.now() + expiresIn * 1000 : Number.POSITIVE_INFINITY });
    }
    async find(id: string) {
      return live(this.#key(id));
    }
    async findByUid(uid: string) {
      for (const key of store.keys()) if (key.startsWith(`${this.#model}:`) && live(key)?.uid === uid) return live(key);
      return undefined;
    }
    async findByUserCode(userCode: string) {
      for (const key of store.keys()) if (key.startsWith(`${this.#model}:`) && live(key)?.userCode === userCode) return live(key);
      return undefined;
    }
    async consume(id: string) {
      const payload = live(this.#key(id));
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string) {
      store.delete(this.#key(id));
    }
    async revokeByGrantId(grantId: string) {
      for (const [key, entry] of store) if (entry.payload.grantId === grantId) store.delete(key);
    }
  };
}

/**
 * The IdP's own pages: a login form (user name and password; a disabled or unknown user is
 * refused there) with a Cancel link (the person declines: `access_denied` goes back to the
 * gateway), and consent granted without asking.
 */
async function interaction(provider: Provider, users: Map<string, TestUser>, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const [, , uid, action] = new URL(req.url ?? '/', 'http://idp').pathname.split('/');
  const details = await provider.interactionDetails(req, res);
  if (action === 'abort') {
    return provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The person cancelled.' }, { mergeWithLastSubmission: false });
  }
  if (details.prompt.name === 'consent') {
    const { prompt, params, session, grantId } = details;
    const grant = grantId ? await provider.Grant.find(grantId) : new provider.Grant({ accountId: session?.accountId as string, clientId: params.client_id as string });
    if (!grant) throw new Error('grant not found');
    const missing = prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    return provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
  }
  if (req.method === 'POST' && action === 'login') {
    const form = new URLSearchParams(await bodyOf(req));
    const user = users.get(form.get('username') ?? '');
    if (user && !user.disabled && user.password === form.get('password')) {
      return provider.interactionFinished(req, res, { login: { accountId: user.sub } }, { mergeWithLastSubmission: false });
    }
    return loginForm(res, uid as string, 'Wrong user name or password, or the account is disabled.');
  }
  return loginForm(res, uid as string);
}

function loginForm(res: http.ServerResponse, uid: string, error?: string): void {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(`<!doctype html><html><head><title>Test IdP sign-in</title></head><body><h1>Test IdP</h1>${error ? `<p id="error">${error}</p>` : ''}
<form method="post" action="/interaction/${uid}/login"><label>User <input name="username" id="username"></label><label>Password <input name="password" id="password" type="password"></label><button type="submit" id="sign-in">Sign in</button></form>
<a id="cancel" href="/interaction/${uid}/abort">Cancel</a></body></html>`);
}

async function bodyOf(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
