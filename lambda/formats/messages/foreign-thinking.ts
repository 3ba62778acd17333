import { isPackedCarrier } from '../../translate/reasoning-carry.ts';
import { isObject, type Json } from '../../translate/request/shared.ts';
import type { CleanedRequest } from '../cleaned-request.ts';
import { thinkingCannotStay } from './tool-turn.ts';

/**
 * A conversation that crossed providers carries thinking blocks the translator packed (`gw1.`,
 * translate/reasoning-carry.ts) from an OpenAI-side answer. A Claude platform cannot verify them,
 * so they are removed, and everything else goes out as the client sent it: newer Claude models
 * check that nothing before a thinking block changed since it was produced, and refuse the
 * request (400) or drop the block when it did ("preserved thinking",
 * https://platform.claude.com/docs/en/build-with-claude/preserved-thinking), so the conversation
 * must not go through a translation that rewrites it. When the tool turn being continued is left
 * without its opening thinking block, thinking is turned off for this request (tool-turn.ts).
 *
 * Undefined when the request cannot be sent this way (an assistant turn made only of foreign
 * reasoning would be left empty): the caller translates it instead.
 */
export function withoutForeignThinking(rawBody: string, body: Json): CleanedRequest | undefined {
  // Content blocks (and, unvalidated, messages) may be anything at all: what is not an object goes as sent.
  const messages: unknown[] = Array.isArray(body.messages) ? body.messages : [];
  let removed = false;
  const cleaned: unknown[] = [];
  for (const message of messages) {
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
    cleaned.push({ ...message, content });
  }
  if (!removed) return { body: rawBody, dropped: [] };
  const out: Json = { ...body, messages: cleaned };
  const dropped = ['reasoning from another provider'];
  const cannotStay = isThinkingOn(body.thinking) ? thinkingCannotStay(cleaned) : undefined;
  if (cannotStay) {
    delete out.thinking;
    dropped.push(cannotStay);
  }
  return { body: JSON.stringify(out), dropped };
}

function isForeign(block: unknown): boolean {
  return isObject(block) && ((block.type === 'thinking' && isPackedCarrier(block.signature)) || (block.type === 'redacted_thinking' && isPackedCarrier(block.data)));
}

function isThinkingOn(thinking: unknown): boolean {
  return isObject(thinking) && (thinking.type === 'enabled' || thinking.type === 'adaptive');
}
