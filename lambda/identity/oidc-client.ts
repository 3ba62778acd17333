import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { IdentityConfig } from '../config/identity-schema.ts';
import { claimAt, personFromClaims } from './claims.ts';
import type { Person } from './principal.ts';

/**
 * The gateway as an OpenID Connect relying party of the company's IdP: discovery, the
 * authorization code flow with PKCE (S256), state and nonce, ID tokens verified against the
 * IdP's published keys, and refreshes that re-check the person. Any provider that publishes
 * `<issuer>/.well-known/openid-configuration` works; the IdP needs no device grant.
 *
 * Discovery documents and key sets are kept in module scope, so a warm instance reuses them
 * across invocations (discovery for an hour, keys as jose caches them: ten minutes, refetched at
 * once for an unknown key id but at most every 30 s). Every IdP call has a timeout.
 */
const DISCOVERY_TTL_MS = 3_600_000;
const TIMEOUTS: IdpTimeouts = { discoveryMs: 5_000, tokenMs: 10_000 };
/** Clock difference forgiven on the ID token's `exp`, `iat` and `nbf`. */
const CLOCK_TOLERANCE_SECONDS = 60;

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  token_endpoint_auth_methods_supported?: string[];
  id_token_signing_alg_values_supported?: string[];
}

const discoveries = new Map<string, { document: Promise<Discovery>; until: number }>();
const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

/**
 * Why an IdP call failed: `refused` (the IdP answered `invalid_grant`: the person or their grant
 * is gone), `invalid` (its answer failed verification), `unavailable` (no usable answer: network,
 * timeout, server error, misconfiguration). Messages carry error codes, never IdP answers.
 */
export class IdpError extends Error {
  override readonly name = 'IdpError';
  readonly kind: 'refused' | 'invalid' | 'unavailable';

  constructor(kind: IdpError['kind'], message: string) {
    super(message);
    this.kind = kind;
  }
}

export interface IdpTokens {
  idToken?: string;
  refreshToken?: string;
}

/** A verified ID token's person; `groupsClaimed`: the token carried the groups claim (some IdPs leave it out of refreshed tokens). */
export interface Identified {
  person: Person;
  groupsClaimed: boolean;
}

export type IdentityClaimsConfig = Pick<IdentityConfig, 'issuer' | 'clientId' | 'scopes' | 'authorizationParams' | 'groupsClaim' | 'emailClaim' | 'tokenEndpointAuthMethod'>;

/** How long IdP calls may take (tests shorten them). */
export interface IdpTimeouts {
  discoveryMs: number;
  tokenMs: number;
}

export class OidcRelyingParty {
  readonly #config: IdentityClaimsConfig;
  readonly #clientSecret: () => Promise<string | undefined>;
  readonly #timeouts: IdpTimeouts;

  constructor(config: IdentityClaimsConfig, clientSecret: () => Promise<string | undefined>, timeouts: IdpTimeouts = TIMEOUTS) {
    this.#config = config;
    this.#clientSecret = clientSecret;
    this.#timeouts = timeouts;
  }

  /** Where to send the browser: the IdP's authorization endpoint with this round trip's parameters. */
  async authorizationUrl(request: { redirectUri: string; state: string; nonce: string; challenge: string }): Promise<URL> {
    const discovery = await this.#discovery();
    const url = new URL(discovery.authorization_endpoint);
    // Extra parameters first: the ones the round trip's security rests on cannot be overridden.
    for (const [name, value] of Object.entries(this.#config.authorizationParams ?? {})) url.searchParams.set(name, value);
    const params = {
      response_type: 'code',
      client_id: this.#config.clientId,
      redirect_uri: request.redirectUri,
      scope: this.#config.scopes.join(' '),
      state: request.state,
      nonce: request.nonce,
      code_challenge: request.challenge,
      code_challenge_method: 'S256',
    };
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return url;
  }

  /** The origin browsers are sent to (the verification page's CSP allows its forms to lead there). */
  async authorizationOrigin(): Promise<string> {
    return new URL((await this.#discovery()).authorization_endpoint).origin;
  }

  async redeemCode(code: string, verifier: string, redirectUri: string): Promise<IdpTokens> {
    return this.#token({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri });
  }

  async refresh(refreshToken: string): Promise<IdpTokens> {
    return this.#token({ grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  /**
   * Verifies an ID token (signature against the IdP's keys, issuer, audience, expiry; the nonce
   * of a sign-in; the subject of a refresh: OpenID Connect Core §3.1.3.7, §12.2) and reads the
   * person from it.
   */
  async identify(idToken: string, expected: { nonce?: string; sub?: string }): Promise<Identified> {
    const discovery = await this.#discovery();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, keySet(discovery.jwks_uri, this.#timeouts.discoveryMs), {
        issuer: discovery.issuer,
        audience: this.#config.clientId,
        algorithms: asymmetric(discovery.id_token_signing_alg_values_supported),
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['sub', 'exp', 'iat'],
      }));
    } catch (error) {
      const code = (error as { code?: string }).code ?? 'ERR_UNKNOWN';
      // The key set could not be fetched: the IdP is unreachable, not the token wrong.
      if (code === 'ERR_JWKS_TIMEOUT' || code === 'ERR_JOSE_GENERIC' || (error instanceof TypeError && /fetch/i.test(error.message))) throw new IdpError('unavailable', `the IdP's keys could not be read (${code})`);
      throw new IdpError('invalid', `the ID token failed verification (${code})`);
    }
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== this.#config.clientId) throw new IdpError('invalid', 'the ID token was issued to another party (azp)');
    if (expected.nonce !== undefined && payload.nonce !== expected.nonce) throw new IdpError('invalid', 'the ID token does not carry this sign-in\'s nonce');
    if (expected.sub !== undefined && payload.sub !== expected.sub) throw new IdpError('invalid', 'the refreshed ID token names another subject');
    return { person: personFromClaims(payload, this.#config), groupsClaimed: claimAt(payload, this.#config.groupsClaim) !== undefined };
  }

  async #token(grant: Record<string, string>): Promise<IdpTokens> {
    const discovery = await this.#discovery();
    const form = new URLSearchParams(grant);
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    const secret = await this.#clientSecret();
    const offered = discovery.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
    const method = this.#config.tokenEndpointAuthMethod ?? (offered.includes('client_secret_basic') || !offered.includes('client_secret_post') ? 'client_secret_basic' : 'client_secret_post');
    if (secret === undefined) form.set('client_id', this.#config.clientId);
    else if (method === 'client_secret_basic') {
      // RFC 6749 §2.3.1: both parts form-encoded before Base64.
      headers.authorization = `Basic ${Buffer.from(`${formEncode(this.#config.clientId)}:${formEncode(secret)}`).toString('base64')}`;
    } else {
      form.set('client_id', this.#config.clientId);
      form.set('client_secret', secret);
    }
    let response: Response;
    try {
      response = await fetch(discovery.token_endpoint, { method: 'POST', headers, body: form, redirect: 'manual', signal: AbortSignal.timeout(this.#timeouts.tokenMs) });
    } catch (error) {
      throw new IdpError('unavailable', `the IdP's token endpoint could not be reached (${(error as Error).name})`);
    }
    const body = (await response.json().catch(() => ({}))) as { error?: unknown; id_token?: unknown; refresh_token?: unknown };
    if (!response.ok) {
      const code = typeof body.error === 'string' ? body.error.slice(0, 64) : `HTTP ${response.status}`;
      throw new IdpError(body.error === 'invalid_grant' ? 'refused' : 'unavailable', `the IdP's token endpoint answered ${code}`);
    }
    const tokens: IdpTokens = {};
    if (typeof body.id_token === 'string') tokens.idToken = body.id_token;
    if (typeof body.refresh_token === 'string' && body.refresh_token !== '') tokens.refreshToken = body.refresh_token;
    return tokens;
  }

  #discovery(): Promise<Discovery> {
    const issuer = this.#config.issuer;
    const cached = discoveries.get(issuer);
    if (cached && cached.until > Date.now()) return cached.document;
    const document = fetchDiscovery(issuer, this.#timeouts.discoveryMs);
    discoveries.set(issuer, { document, until: Date.now() + DISCOVERY_TTL_MS });
    // A failure is not kept: the next sign-in asks again.
    document.catch(() => discoveries.delete(issuer));
    return document;
  }
}

async function fetchDiscovery(issuer: string, timeoutMs: number): Promise<Discovery> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  let document: Partial<Discovery>;
  try {
    const response = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    document = (await response.json()) as Partial<Discovery>;
  } catch (error) {
    throw new IdpError('unavailable', `the IdP's discovery document could not be read (${(error as Error).message.slice(0, 80)})`);
  }
  // OpenID Connect Discovery §4.3: the document must name the issuer it was fetched for.
  if (typeof document.issuer !== 'string' || document.issuer.replace(/\/+$/, '') !== issuer.replace(/\/+$/, '')) {
    throw new IdpError('unavailable', 'the IdP\'s discovery document names another issuer');
  }
  for (const field of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
    if (typeof document[field] !== 'string') throw new IdpError('unavailable', `the IdP's discovery document has no ${field}`);
  }
  return document as Discovery;
}

function keySet(jwksUri: string, timeoutMs: number): ReturnType<typeof createRemoteJWKSet> {
  let set = keySets.get(jwksUri);
  if (!set) {
    set = createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: timeoutMs });
    keySets.set(jwksUri, set);
  }
  return set;
}

/** The signing algorithms the IdP announces, public-key ones only (never `none`, never a shared secret). */
function asymmetric(announced: string[] | undefined): string[] {
  const usable = (announced ?? ['RS256']).filter((alg) => /^(RS|PS|ES)(256|384|512)$|^EdDSA$|^Ed25519$/.test(alg));
  return usable.length > 0 ? usable : ['RS256'];
}

function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}
