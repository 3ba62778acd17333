/**
 * Lifetimes and per-IP limits of sign-in, in one place (docs/sign-in-reference.md, "Lifetimes and limits", lists them).
 * Access-token and session lifetimes come from the config (`accessTokenMinutes`, `sessionDays`).
 */

/** A device code and its user code (RFC 8628 `expires_in`). */
export const DEVICE_CODE_SECONDS = 600;
/** The polling interval the client is given (RFC 8628 `interval`); `slow_down` adds 5 s. */
export const POLL_INTERVAL_SECONDS = 5;
export const SLOW_DOWN_STEP_SECONDS = 5;
/** Clock skew between instances forgiven when a poll is checked against the interval. */
export const POLL_TOLERANCE_MS = 1_000;
/** A round trip through the IdP (PKCE verifier, nonce, browser binding). */
export const LOGIN_SECONDS = 600;
/** The confirmation step of the verification page (its signed ticket). */
export const TICKET_SECONDS = 600;
/**
 * A refresh token used again this soon after its first use is taken as two processes of one
 * client refreshing at once (several Claude Code sessions share one stored credential), not as a
 * theft: the second gets tokens of its own in the same session. Later reuse revokes the session.
 */
export const REFRESH_REUSE_GRACE_MS = 30_000;
/** Audit events are kept this long. */
export const AUDIT_DAYS = 400;

/** Per-IP counters: at most `max` in each `windowSeconds` window. */
export const RATE_LIMITS = {
  /** POST /oauth/device_authorization (sign-in starts). */
  device_authorization: { max: 30, windowSeconds: 600 },
  /** POST /device with a user code (code entries). */
  code_entry: { max: 10, windowSeconds: 600 },
  /** GET /oauth/callback (IdP round trips coming back). */
  callback: { max: 30, windowSeconds: 600 },
  /** Console sign-ins: GET /admin/login (IdP round trips started) and POST /admin/login/link (one-time links used). */
  console_sign_in: { max: 30, windowSeconds: 600 },
} as const;
export type RateLimitName = keyof typeof RATE_LIMITS;
