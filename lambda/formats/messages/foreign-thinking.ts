import { isPackedCarrier } from '../../translate/reasoning-carry.ts';
import { isObject, type Json } from '../../translate/request/shared.ts';
import type { CleanedRequest } from '../cleaned-request.ts';

/**
 * A conversation that crossed providers carries thinking blocks the translator packed (`gw1.`,
 * translate/reasoning-carry.ts) from an OpenAI-side answer. A Claude platform cannot verify them,
 * so they are removed, and everything else goes out as the client sent it: newer Claude models
 * check that nothing before a thinking block changed since it was produced, and refuse the
 * request (400) or drop the block when it did ("preserved thinking",
 * https://platform.claude.com/docs/en/build-with-claude/preserved-thinking), so the conversation
 * must not go through a translation that rewrites it. When the tool turn being continued opened
 * with such a block, thinking is turned off for this request, as Anthropic requires the turn it
 * continues to open with its own thinking block.
 *
 * Undefined when the request cannot be sent this way (an assistant turn made only of foreign
 * reasoning would be left empty): the caller translates it instead.
 */
export function withoutForeignThinking(rawBody: string, body: Json): CleanedRequest | undefined {
  // Content blocks (and, unvalidated, messages) may be anything at all: what is not an object goes as sent.
  const messages: unknown[] = Array.isArray(body.messages) ? body.messages : [];
  let removed = false;
  let continuedTurnLostThinking = false;
  const lastAssistant = messages.findLastIndex((message) => isObject(message) && message.role === 'assistant');
  const cleaned: unknown[] = [];
  for (const [index, message] of messages.entries()) {
    if (!isObject(message) || message.role !== 'assistant' || !Array.isArray(message.content)) {
      cleaned.push(message);
      continue;
    }
    const content = message.content.filter((block) => !isForeign(block));
    if (content.length === message.content.length) {
      cleaned.push(message);
      continue;
    }
    if (content.length === 0) return undefined;
    removed = true;
    if (index === lastAssistant && isForeign(message.content[0]) && !isThinking(content[0])) continuedTurnLostThinking = true;
    cleaned.push({ ...message, content });
  }
  if (!removed) return { body: rawBody, dropped: [] };
  const out: Record<string, unknown> = { ...body, messages: cleaned };
  const dropped = ['reasoning from another provider'];
  if (continuedTurnLostThinking && continuesToolTurn(messages) && isThinkingOn(body.thinking)) {
    delete out.thinking;
    dropped.push('thinking (the turn being continued has no Anthropic thinking block)');
  }
  return { body: JSON.stringify(out), dropped };
}

function isThinking(block: unknown): boolean {
  return isObject(block) && (block.type === 'thinking' || block.type === 'redacted_thinking');
}

function isForeign(block: unknown): boolean {
  return isObject(block) && ((block.type === 'thinking' && isPackedCarrier(block.signature)) || (block.type === 'redacted_thinking' && isPackedCarrier(block.data)));
}

function continuesToolTurn(messages: unknown[]): boolean {
  const last = messages.at(-1);
  return isObject(last) && last.role === 'user' && Array.isArray(last.content) && last.content.some((block) => isObject(block) && block.type === 'tool_result');
}

function isThinkingOn(thinking: unknown): boolean {
  return isObject(thinking) && (thinking.type === 'enabled' || thinking.type === 'adaptive');
}
