import type { Scenario } from './conformance.ts';
import type { RouteSpec } from './routes.ts';

/**
 * The sign-in rows of the conformance table (issue 21: people sign in with the company's IdP).
 * Gateway-level behaviour, so each runs once, on the same-format route, against a gateway with
 * `identity` (sign-in-environment.ts); the other columns show "—".
 */
const row = (id: string, label: string, note?: string): Scenario => ({ id, label, routeIndependent: true, ...(note ? { note } : {}) });

export const CLAUDE_SIGN_IN = {
  login: row(
    'sign-in-login',
    'Sign-in: /login through the gateway (managed settings), the browser and the IdP, the email confirmed',
    'Managed settings with forceLoginMethod "gateway" and forceLoginGatewayUrl <host>/first, in /etc/claude-code/managed-settings.json as Claude Code reads it (an overlay seen by that process only). The gateway on https (a TLS front on loopback, a test CA the CLI trusts through NODE_EXTRA_CA_CERTS). In the TUI: /login shows the gateway set by managed settings, asks to trust it with the fingerprint of the certificate the host serves (which it then pins), shows the code and the verification link and opens the link ($BROWSER); Chromium completes the verification page and the IdP\'s form (a certified OpenID provider on loopback); Claude Code shows the email the gateway answered, asks to confirm it, and keeps the tokens. On the wire: RFC 8414 metadata under /first, device authorization with surface=claude_code, polls until the tokens.',
  ),
  turn: row('sign-in-turn', 'Sign-in: a turn with the session token (refreshed first: 5-minute tokens)', 'The gateway hands out 5-minute tokens here, so Claude Code refreshes before its first request (less than 5 minutes left): the refresh grant rotates the tokens, and the turn carries the new access token.'),
  usage: row(
    'sign-in-usage',
    'Sign-in: /usage shows the person\'s spend from GET /first/api/oauth/usage',
    'Signed in, /usage asks GET /first/api/oauth/usage with the session\'s bearer. Alice has no cap: the gateway answers no limits and her spend in cents for the UTC day, week and month (no-store), and Claude Code shows them as "Spend (UTC) $… today · $… this week · $… this month" beside the session\'s cost.',
  ),
  capWarning: row(
    'sign-in-cap-warning',
    'Sign-in: a person past 75 % of a spend cap: Claude Code warns',
    'A gateway with a $5.00 daily cap for everyone (identity.caps.default); Alice signs in with /login. Her first turn is metered at $4.12 (the route\'s table price, $2 per million input tokens, for what the scripted upstream reports): its answer says status allowed and Claude Code shows nothing. Her second turn\'s answer carries anthropic-ratelimit-unified-status allowed_warning, utilization 0.82, surpassed threshold 0.75, and Claude Code shows its spend-limit warning with the reset.',
  ),
  capUsage: row(
    'sign-in-cap-usage',
    'Sign-in: /usage shows the dollars spent against the person\'s cap',
    'The same person: GET /first/api/oauth/usage answers her binding cap (used_credits and monthly_limit in cents, the percent, one limits row, active, with its reset), and Claude Code\'s Spend limit bar shows the percent used and "$4.12 / $5.00 spent today", the amounts as Claude Code writes them (two decimals unless all are whole dollars).',
  ),
  capRefused: row(
    'sign-in-cap-refused',
    'Sign-in: a person over a spend cap: the turn is refused with the reset time, nothing goes upstream',
    'A third turn takes her past $5.00; the next is refused before any upstream: 429 billing_error, x-should-retry false, anthropic-ratelimit-unified-status rejected, and Claude Code shows the gateway\'s message (the daily cap, when it resets, whom to ask) and does not retry.',
  ),
  logout: row('sign-in-logout', 'Sign-in: /logout revokes both tokens; the old token is refused at once', 'Claude Code posts the access token and the refresh token (in either order) to the revocation endpoint; the gateway then answers the old access token 401 authentication_error with x-should-retry: false, and the refresh token invalid_grant.'),
  removed: row('sign-in-removed', 'Sign-in: a person removed at the IdP is asked to sign in again at the next refresh', 'Bob signs in with /login; he is removed at the IdP; at his next turn Claude Code refreshes, the gateway asks the IdP, answers 401 invalid_grant and ends the session; the turn\'s request is refused 401 (x-should-retry: false) and Claude Code says "Please run /login".'),
  helper: row(
    'sign-in-helper',
    'Sign-in: apiKeyHelper = the login helper (gateway-login token)',
    'The helper downloaded from the gateway (GET /login/helper.mjs) and signed in with the device flow (Chromium); Claude Code runs it as its apiKeyHelper (the setting as docs/sign-in.md writes it) and sends its token as Authorization and x-api-key, on the turn and on GET /first/v1/models (model discovery; Claude Code\'s documentation says x-api-key alone there: the gateway takes either).',
  ),
} satisfies Record<string, Scenario>;

export const CODEX_SIGN_IN = {
  helperTurn: row(
    'sign-in-helper',
    'Sign-in: the login helper as the auth command: a turn with its token',
    'The helper downloaded from the gateway (GET /login/helper.mjs) and signed in with the device flow (Chromium); Codex runs `gateway-login token <host>` ([model_providers.gateway.auth]) and sends its output as the bearer on its model catalog request (GET /second/v1/models?client_version=…) and on the turn.',
  ),
  recovery: row('sign-in-401', 'Sign-in: a token the gateway refuses: 401, the helper re-run, the turn served', 'The helper\'s kept access token is one the gateway does not take (as after its store was restored). Codex gets a 401, runs the command again; asked again within a minute, the helper checks the token, refreshes, and Codex retries with the new one.'),
  removed: row('sign-in-removed', 'Sign-in: a person removed at the IdP: the helper says to sign in again', 'Bob signs in with the helper and is removed at the IdP; when his token is due for a refresh, the gateway refuses it (invalid_grant, the session ends) and the helper exits 1 with one line saying to sign in again, which Codex shows. Codex 0.171 still sends the turn, without a credential (and retries it): the gateway refuses each 401 with x-should-retry: false before any upstream.'),
} satisfies Record<string, Scenario>;

/** Declares a client's sign-in cells on every route (run on `primary`, "—" elsewhere). */
export function signInCells(routes: RouteSpec[], declare: (route: RouteSpec) => void): void {
  for (const route of routes) describe(route.id, () => declare(route));
}
