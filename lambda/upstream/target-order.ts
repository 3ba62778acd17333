import { createHash } from 'node:crypto';
import type { RouteMatch, Target } from '../config/routing.ts';

/**
 * The order a request tries its route's targets in.
 *
 * Primary targets are ranked by weighted rendezvous hashing on the conversation's stickiness key:
 * each target scores `-weight / ln(u)`, u a hash of (key, target) in (0, 1). The best score serves,
 * so one conversation keeps its target (and its prompt cache) for as long as that target is
 * available, conversations spread over targets in proportion to their weights, and a target that
 * is taken out (cooling down) moves only its own conversations, not everyone's. The other
 * primaries follow by score, then the fallbacks in their configured order. Targets cooling down
 * go last: tried only when everything else failed, so a dead primary does not add its timeout to
 * every request, yet a route whose every target is cooling down still answers.
 */
export function attemptOrder(match: RouteMatch, stickyKey: string, coolingDown: (target: Target) => boolean): Target[] {
  const primaries = match.targets.length === 1 ? [...match.targets] : rankByScore(match.targets, stickyKey);
  const ordered = [...primaries, ...match.fallbacks];
  return [...ordered.filter((target) => !coolingDown(target)), ...ordered.filter(coolingDown)];
}

function rankByScore(targets: readonly Target[], stickyKey: string): Target[] {
  return targets
    .map((target) => ({ target, score: -target.weight / Math.log(unitHash(`${stickyKey}\u0000${target.upstream.name}\u0000${target.upstreamModel}`)) }))
    .sort((a, b) => b.score - a.score)
    .map(({ target }) => target);
}

/** A stable hash of `text` as a number strictly between 0 and 1. */
export function unitHash(text: string): number {
  const digest = createHash('sha256').update(text).digest();
  // 48 bits are plenty; +1 and +2 keep it off 0 and 1 (ln would be infinite or zero).
  return (digest.readUIntBE(0, 6) + 1) / (2 ** 48 + 2);
}

/**
 * What keeps one conversation on one target and key: Claude Code's session id, Codex's
 * `prompt_cache_key` (stable per conversation), else the caller's gateway key.
 */
export function stickinessKey(headers: Record<string, string | undefined>, body: Record<string, unknown> | undefined, keyId: string | undefined): string {
  const session = headers['x-claude-code-session-id'];
  if (session) return `session:${session}`;
  const cacheKey = body?.prompt_cache_key;
  if (typeof cacheKey === 'string' && cacheKey !== '') return `cache:${cacheKey}`;
  return `key:${keyId ?? 'anonymous'}`;
}
