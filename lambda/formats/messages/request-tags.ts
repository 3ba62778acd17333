import { removeTopLevelMembers, topLevelKeys } from '../json-fields.ts';

/**
 * The Anthropic API's request tags: the top-level `tags` body member and its beta value. They
 * label usage and change nothing in the reply; Amazon Bedrock (InvokeModel and Mantle) refuses
 * both, so they are left out before a Bedrock upstream, as Claude Code's gateway protocol asks
 * (https://code.claude.com/docs/en/llm-gateway-protocol, "Proxying to Bedrock, Vertex, or
 * Foundry"). Anthropic's own API takes them and gets them unchanged.
 */
export const REQUEST_TAGS_BETA = 'request-tags-2026-08-21';
export const REQUEST_TAGS_MEMBER = 'tags';

/** The body without `tags` and the `anthropic-beta` header without the tags beta (undefined when nothing is left), and what was removed. */
export function withoutRequestTags(body: string, betaHeader: string | undefined): { body: string; betaHeader: string | undefined; dropped: string[] } {
  const dropped: string[] = [];
  let cleaned = body;
  if (topLevelKeys(body).includes(REQUEST_TAGS_MEMBER)) {
    cleaned = removeTopLevelMembers(body, new Set([REQUEST_TAGS_MEMBER]));
    dropped.push(REQUEST_TAGS_MEMBER);
  }
  const betas = (betaHeader ?? '').split(',').map((beta) => beta.trim()).filter(Boolean);
  const kept = betas.filter((beta) => beta !== REQUEST_TAGS_BETA);
  if (kept.length < betas.length) dropped.push(`anthropic-beta ${REQUEST_TAGS_BETA}`);
  return { body: cleaned, betaHeader: kept.length > 0 ? (kept.length === betas.length ? betaHeader : kept.join(',')) : undefined, dropped };
}
