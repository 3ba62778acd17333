import { looksLikeAccessToken, looksLikeApiKey } from './key-material.ts';

/** What a request presents: an issued key (`gwk_`), or a sign-in access token (`gwt_`). */
export type PresentedCredential = { kind: 'key'; value: string } | { kind: 'session'; value: string };

/**
 * The gateway credential from `Authorization: Bearer` or `x-api-key`. Claude Code sends both when
 * both of its variables are set (and, with `apiKeyHelper`, the helper's token in both), and one
 * may be a provider key: the first that has one of our formats wins, the bearer before x-api-key.
 */
export function presentedCredential(headers: Record<string, string | undefined>): PresentedCredential | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '')?.[1];
  for (const candidate of [bearer, headers['x-api-key']?.trim()]) {
    if (candidate === undefined) continue;
    if (looksLikeApiKey(candidate)) return { kind: 'key', value: candidate };
    if (looksLikeAccessToken(candidate)) return { kind: 'session', value: candidate };
  }
  return undefined;
}
