import type { IdentityConfig } from '../config/identity-schema.ts';
import type { HandlerResponse } from '../deps.ts';
import type { IdentityRequest } from './http.ts';
import type { IdpTokens, OidcRelyingParty } from './oidc-client.ts';
import type { SpendReaders } from '../usage/spend-standing.ts';
import type { Person, PersonPolicy, Principal } from './principal.ts';
import type { OtlpForwarder } from './telemetry.ts';
import type { IdentityKeys } from './secrets.ts';
import type { AuditLog } from './store/audit.ts';
import type { DeviceGrantStore, LoginTransaction } from './store/device-grants.ts';
import type { PeopleStore } from './store/people.ts';
import type { RateLimits } from './store/rate-limits.ts';
import type { SessionStore } from './store/sessions.ts';

/** Everything the sign-in room's endpoint modules share; built once per instance by createIdentityDoor. */
export interface IdentityContext {
  config: IdentityConfig;
  grants: DeviceGrantStore;
  sessions: SessionStore;
  people: PeopleStore;
  audit: AuditLog;
  rates: RateLimits;
  idp: OidcRelyingParty;
  /** Keys derived from the identity secret (read once, on first use). */
  keys(): Promise<IdentityKeys>;
  /** Epoch ms (a test clock in tests). */
  now(): number;
  /** A session ended on this instance: its cached access tokens stop working here at once. */
  forgetSession(id: string): void;
  /** What each kind of IdP round trip does when it comes back (`device` is this room's own). */
  completions: Readonly<Record<string, SignInCompletion>>;
  /** The principal's person's policy (the door's policyFor). */
  policyFor(principal: Principal): Promise<PersonPolicy | undefined>;
  /** The usage counters (absent when nothing is metered). */
  spend?: SpendReaders;
  /** Where telemetry goes (absent: discarded). */
  telemetry?: OtlpForwarder;
}

/**
 * What a round trip through the IdP was for, and what happens when it comes back: the device
 * flow approves a device grant; the console (another room) opens a console session. The callback
 * has verified the person (ID token, nonce, PKCE, browser binding, allowedGroups) before either runs.
 */
export interface SignInCompletion {
  complete(context: IdentityContext, request: IdentityRequest, login: LoginTransaction, person: Person, tokens: IdpTokens): Promise<HandlerResponse>;
  /** The round trip failed (the person cancelled, the IdP or the gateway refused them): `reason` is from the gateway's vocabulary. */
  fail(context: IdentityContext, request: IdentityRequest, login: LoginTransaction, reason: string): Promise<void>;
}
