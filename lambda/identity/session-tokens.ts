import { generateAccessToken, generateRefreshToken, hashSecret } from '../auth/key-material.ts';
import type { IdentityContext } from './context.ts';
import { DEVICE_CODE_SECONDS } from './limits.ts';
import type { Person } from './principal.ts';
import type { AuditEvent } from './store/audit.ts';
import { epochSeconds } from './store/table.ts';
import type { Session } from './store/sessions.ts';

/** The token endpoint's success body (RFC 6749 §5.1; `email` is Claude Code's extension, device grant only). */
export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  email?: string;
}

/**
 * When a new session ends. With an IdP refresh token, after `sessionDays` (each refresh re-checks
 * the IdP meanwhile); without one, the gateway cannot re-check the person, so the session is its
 * first access token's life (plus the time the device flow may still take to hand it out).
 */
export function sessionEnd(context: IdentityContext, createdAt: number, refreshable: boolean): number {
  const seconds = refreshable ? context.config.sessionDays * 86_400 : DEVICE_CODE_SECONDS + context.config.accessTokenMinutes * 60;
  return epochSeconds(createdAt) + seconds;
}

/**
 * Mints an access token (and a refresh token when the session can be refreshed) for a session,
 * storing their digests only. The access token never outlives its session.
 */
export async function mintTokens(context: IdentityContext, session: Session, person: Person): Promise<TokenAnswer> {
  const now = epochSeconds(context.now());
  const expiresAt = Math.min(now + context.config.accessTokenMinutes * 60, session.expiresAt);
  const access = generateAccessToken();
  await context.sessions.putAccess(hashSecret(access), { family: session.id, person, expiresAt });
  const answer: TokenAnswer = { access_token: access, token_type: 'Bearer', expires_in: Math.max(1, expiresAt - now) };
  if (session.idpRefresh !== undefined) {
    const refresh = generateRefreshToken();
    await context.sessions.putRefresh(hashSecret(refresh), { family: session.id, expiresAt: session.expiresAt });
    answer.refresh_token = refresh;
  }
  return answer;
}

/**
 * Ends a session at once (sign-out, reuse, the IdP's refusal, an operator): its access and
 * refresh tokens stop working everywhere (this instance at once, others within the session
 * cache's seconds), with an audit event. False when it had already ended.
 */
export async function endSession(
  context: Pick<IdentityContext, 'sessions' | 'audit' | 'now' | 'forgetSession'>,
  id: string,
  reason: string,
  event: Omit<AuditEvent, 'type' | 'session' | 'reason'>,
): Promise<boolean> {
  const ended = await context.sessions.revoke(id, reason, context.now());
  context.forgetSession(id);
  if (!ended) return false;
  await context.audit.record({ ...event, type: 'session_revoked', sub: ended.person.sub, email: ended.person.email, surface: ended.surface, session: id, reason }, context.now());
  return true;
}
