import * as z from 'zod/mini';

/**
 * The config's optional `"identity"`: sign-in with the company's OpenID Connect provider, and the
 * policy (models, spend caps, Claude Code managed settings) per person and group. Absent = the
 * gateway knows only issued keys. Described in docs/sign-in.md.
 *
 * @example
 * "identity": {
 *   "issuer": "https://example.okta.com/oauth2/default", "clientId": "0oa…",
 *   "clientSecretEnv": "GATEWAY_IDP_CLIENT_SECRET", "adminGroups": ["gateway-admins"],
 *   "policies": [{ "groups": ["contractors"], "models": ["claude-haiku-*"] }, { "models": ["*"] }],
 *   "caps": { "default": { "monthly": 400 }, "groups": { "interns": { "daily": 5 } } }
 * }
 */
const EnvName = z.string().check(z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'));
const GroupName = z.string().check(z.minLength(1), z.maxLength(256));
const Groups = z.array(GroupName);
const ModelGlob = z.string().check(z.minLength(1), z.maxLength(256));
const Usd = z.number().check(z.minimum(0), z.maximum(100_000_000));

/** Spend caps in US dollars per UTC day, week (from Monday) and calendar month. */
export const CapsSchema = z.strictObject({
  daily: z.optional(Usd),
  weekly: z.optional(Usd),
  monthly: z.optional(Usd),
});

/** A group's caps for each member: `null` says the group's members have no cap for that period (it matters with groupMode "max"). */
const GroupCapsSchema = z.strictObject({
  daily: z.optional(z.nullable(Usd)),
  weekly: z.optional(z.nullable(Usd)),
  monthly: z.optional(z.nullable(Usd)),
});

/** A budget a whole group shares: per calendar month, as Claude Code's gateway protocol describes pools. */
const PoolSchema = z.strictObject({ monthly: Usd });

/** A policy entry: the first whose `groups` meet the person's is merged onto the base (the entry without `groups`). */
const PolicySchema = z.strictObject({
  groups: z.optional(Groups.check(z.minLength(1, 'list at least one group, or leave "groups" out for the base policy'))),
  /** Model globs the person may use, on every route; the model lists show only these. */
  models: z.optional(z.array(ModelGlob)),
  /** Claude Code's managed settings (the `managed-settings.json` keys), served at /first/managed/settings. */
  managedSettings: z.optional(z.record(z.string(), z.unknown())),
});

export const IdentityConfigSchema = z.strictObject({
  /** The IdP's issuer; its discovery document is `<issuer>/.well-known/openid-configuration`. */
  issuer: z.url({ protocol: /^https?$/, error: 'must be the https:// issuer URL of the OpenID provider' }),
  clientId: z.string().check(z.minLength(1)),
  /** Locally the environment variable holding the client secret; deployed, that member of the identity secret. Absent = a public client (PKCE only). */
  clientSecretEnv: z.optional(EnvName),
  /** How the client secret is sent to the token endpoint, as the app is registered at the IdP; default client_secret_basic when the IdP offers it. */
  tokenEndpointAuthMethod: z.optional(z.enum(['client_secret_basic', 'client_secret_post'])),
  scopes: z._default(z.array(z.string().check(z.minLength(1))), ['openid', 'email', 'profile', 'offline_access']),
  /** Extra authorization request parameters (Google: `{"access_type":"offline","prompt":"consent"}` for refresh tokens). */
  authorizationParams: z.optional(z.record(z.string(), z.string())),
  /** Where the person's groups are in the ID token (a dotted path). */
  groupsClaim: z._default(z.string().check(z.minLength(1)), 'groups'),
  emailClaim: z._default(z.string().check(z.minLength(1)), 'email'),
  /** Only members of these groups may sign in; absent or empty = anyone the IdP authenticates. */
  allowedGroups: z.optional(Groups),
  /** Console roles. */
  adminGroups: z._default(Groups, []),
  viewerGroups: z._default(Groups, []),
  /** The origin clients and browsers use (the IdP redirect URI is `<publicUrl>/oauth/callback`); absent = the runtime's own origin. */
  publicUrl: z.optional(z.url({ protocol: /^https?$/, error: 'must be an http(s):// origin' })),
  accessTokenMinutes: z._default(z.int().check(z.minimum(5), z.maximum(24 * 60)), 60),
  /** A sign-in lasts this long at most; refreshes re-check the IdP within it. */
  sessionDays: z._default(z.int().check(z.minimum(1), z.maximum(365)), 30),
  /** Shown by Claude Code next to the sign-in code (at most 500 characters). */
  loginNotice: z.optional(z.string().check(z.maxLength(500))),
  policies: z._default(z.array(PolicySchema), []),
  caps: z.optional(
    z.strictObject({
      /** The organization's default cap for each person. */
      default: z.optional(CapsSchema),
      /** Per-person caps of each group's members. */
      groups: z.optional(z.record(GroupName, GroupCapsSchema)),
      /** Of several groups' caps: the most restrictive (`min`, default) or the most generous (`max`). */
      groupMode: z._default(z.enum(['min', 'max']), 'min'),
      /** Budgets a whole group shares (monthly). */
      pools: z.optional(z.record(GroupName, PoolSchema)),
      /** What a person whose cap is reached should do next, added to the refusal (e.g. "request an increase at https://…"). */
      blockedMessage: z.optional(z.string().check(z.minLength(1), z.maxLength(300))),
    }),
  ),
  /** Forward Claude Code's telemetry (OTLP/HTTP) to a collector; absent = accepted and discarded. */
  otlp: z.optional(
    z.strictObject({
      endpoint: z.url({ protocol: /^https?$/, error: 'must be the http(s):// base URL of an OTLP/HTTP collector' }),
      /** Environment variable (or identity secret member) holding extra headers, `name=value,name=value`. */
      headersEnv: z.optional(EnvName),
    }),
  ),
});

export type IdentityConfig = z.infer<typeof IdentityConfigSchema>;
export type Caps = z.infer<typeof CapsSchema>;
export type GroupCaps = z.infer<typeof GroupCapsSchema>;
export type PolicyConfig = z.infer<typeof PolicySchema>;
