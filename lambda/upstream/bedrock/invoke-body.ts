import type { CleanedRequest } from '../../formats/cleaned-request.ts';
import { prependTopLevelMember, removeTopLevelMembers, topLevelKeys } from '../../formats/json-fields.ts';
import { isObject, type Json } from '../../translate/request/shared.ts';
import { REQUEST_TAGS_MEMBER } from '../../formats/messages/request-tags.ts';

/**
 * A Messages request body as Amazon Bedrock's InvokeModel takes it
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html):
 * `model` and `stream` leave the body (the model id goes in the path, streaming is the
 * `invoke-with-response-stream` action), `anthropic_version` is `bedrock-2023-05-31` unless the
 * client set one, and beta flags move from the `anthropic-beta` header into `anthropic_beta`.
 * Nothing else is touched, byte for byte: thinking signatures are bound to the exact conversation
 * and system prompt, and prompt-cache prefixes to the exact bytes.
 *
 * Bedrock refuses some betas ("invalid beta flag") and body members ("Extra inputs are not
 * permitted") that Claude Code sends to a Messages gateway; they are removed and reported. AWS
 * documents betas per feature, not as a list, so the betas are an allowlist of those known to
 * work on Bedrock; why each list is what it is: docs/bedrock.md.
 */
const BEDROCK_BETAS: ReadonlySet<string> = new Set([
  'computer-use-2025-01-24',
  'computer-use-2025-11-24',
  'context-1m-2025-08-07',
  'context-management-2025-06-27',
  'compact-2026-01-12',
  'effort-2025-11-24',
  'fine-grained-tool-streaming-2025-05-14',
  'interleaved-thinking-2025-05-14',
  'tool-search-tool-2025-10-19',
  'dangerous-tool-use-2026-09-03',
  'thinking-binding-controls-2026-08-01',
  'thinking-display-updates-2026-08-18',
  'mid-conversation-output-config-2026-07-01',
  'mid-conversation-tool-changes-2026-07-01',
]);

/** Betas Bedrock knows under another name. */
const RENAMED_BETAS: Readonly<Record<string, string>> = { 'advanced-tool-use-2025-11-20': 'tool-search-tool-2025-10-19' };

/**
 * Members Bedrock refuses outright (`model` and `stream` are moved, not dropped). `tags` are the
 * Anthropic API's request tags (formats/messages/request-tags.ts); their beta is not on the list
 * above either.
 */
const REFUSED_MEMBERS = ['metadata', 'service_tier', 'container', 'inference_geo', REQUEST_TAGS_MEMBER];

/** Members Bedrock accepts only together with one of their betas. */
const MEMBERS_NEEDING_BETA: Readonly<Record<string, readonly string[]>> = {
  context_management: ['context-management-2025-06-27', 'compact-2026-01-12'],
};

/**
 * `output_config.format` (structured outputs) is documented for InvokeModel without a beta
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/structured-output.html); the rest of
 * `output_config` (`effort`) is passed only with the effort beta.
 */
const EFFORT_BETA = 'effort-2025-11-24';

export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/**
 * `clientBody` as InvokeModel takes it. `parsed` is the same body as the gateway parsed it
 * (`output_config` and `anthropic_beta` are read there, not by parsing the bytes again: a
 * request may be megabytes).
 */
export function toInvokeBody(clientBody: string, parsed: Json, betaHeader: string | undefined): CleanedRequest {
  const keys = new Set(topLevelKeys(clientBody));
  const dropped: string[] = [];
  const requested = keys.has('anthropic_beta') ? [] : (betaHeader ?? '').split(',').map((beta) => beta.trim()).filter(Boolean);
  const betas: string[] = [];
  for (const beta of requested) {
    const name = RENAMED_BETAS[beta] ?? beta;
    if (!BEDROCK_BETAS.has(name)) dropped.push(`anthropic-beta ${beta}`);
    else if (!betas.includes(name)) betas.push(name);
  }
  const bodyBetas = keys.has('anthropic_beta') ? betasIn(parsed.anthropic_beta) : betas;
  const remove = new Set(['model', 'stream']);
  const drop = (member: string) => {
    remove.add(member);
    dropped.push(member);
  };
  for (const member of REFUSED_MEMBERS) if (keys.has(member)) drop(member);
  for (const [member, needs] of Object.entries(MEMBERS_NEEDING_BETA)) {
    if (keys.has(member) && !needs.some((beta) => bodyBetas.includes(beta))) drop(member);
  }
  let outputConfig: string | undefined;
  if (keys.has('output_config') && !bodyBetas.includes(EFFORT_BETA)) {
    const { kept, removed } = formatOnly(parsed.output_config);
    if (kept === undefined) drop('output_config');
    else if (removed.length > 0) {
      remove.add('output_config');
      outputConfig = kept;
      dropped.push(...removed.map((member) => `output_config.${member}`));
    }
  }
  let body = removeTopLevelMembers(clientBody, remove);
  if (outputConfig !== undefined) body = prependTopLevelMember(body, 'output_config', outputConfig);
  if (betas.length > 0) body = prependTopLevelMember(body, 'anthropic_beta', JSON.stringify(betas));
  if (!keys.has('anthropic_version')) body = prependTopLevelMember(body, 'anthropic_version', JSON.stringify(BEDROCK_ANTHROPIC_VERSION));
  return { body, dropped };
}

function betasIn(betas: unknown): string[] {
  return Array.isArray(betas) ? betas.filter((beta): beta is string => typeof beta === 'string') : [];
}

/** `output_config` reduced to its `format` (re-serialized: unlike messages and system, nothing is bound to its bytes). */
function formatOnly(outputConfig: unknown): { kept: string | undefined; removed: string[] } {
  if (!isObject(outputConfig) || !('format' in outputConfig)) return { kept: undefined, removed: [] };
  const removed = Object.keys(outputConfig).filter((member) => member !== 'format');
  return { kept: JSON.stringify({ format: outputConfig.format }), removed };
}
