import { isObject } from '../../translate/request/shared.ts';

/**
 * Why a Messages request cannot keep thinking on, when it cannot: continuing a tool loop with
 * thinking on, Anthropic requires the assistant turn being continued to open with its own
 * thinking block (refused with "a final `assistant` message must start with a thinking block";
 * https://platform.claude.com/docs/en/build-with-claude/extended-thinking). A turn whose
 * thinking another provider produced has none the API can take, so thinking goes for the
 * request. Undefined when the request is not such a continuation, or the turn opens as required.
 */
export function thinkingCannotStay(messages: readonly unknown[]): string | undefined {
  const last = messages.at(-1);
  const continuing = isObject(last) && last.role === 'user' && Array.isArray(last.content) && last.content.some((block) => isObject(block) && block.type === 'tool_result');
  const turn = messages.findLast((message) => isObject(message) && message.role === 'assistant');
  if (!continuing || !isObject(turn)) return undefined;
  const first: unknown = Array.isArray(turn.content) ? turn.content[0] : undefined;
  if (isObject(first) && (first.type === 'thinking' || first.type === 'redacted_thinking')) return undefined;
  return 'thinking (the turn being continued has no Anthropic thinking block)';
}
