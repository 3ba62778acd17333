import { isObject } from '../../translate/request/shared.ts';
import type { CleanedRequest } from '../cleaned-request.ts';

/**
 * OpenAI encrypts a reasoning item's `encrypted_content` for the organization that produced it;
 * another organization's key is refused with 400 `invalid_encrypted_content` ("The encrypted
 * content ... could not be verified"). A Codex conversation that moved between `openai` targets
 * (or keys) of different organizations carries such items, and Codex keeps sending them.
 */
export function refusesReasoningItems(answer: { statusCode: number; body: unknown }): boolean {
  return answer.statusCode === 400 && typeof answer.body === 'string' && answer.body.includes('"invalid_encrypted_content"');
}

/**
 * The request without its reasoning items (undefined when it has none): the conversation goes on
 * without the earlier reasoning rather than failing. OpenAI may refuse an item it cannot verify
 * even without its encrypted content, so whole items go.
 */
export function withoutReasoningItems(body: Record<string, unknown>): CleanedRequest | undefined {
  const input = body.input;
  if (!Array.isArray(input)) return undefined;
  const kept = input.filter((item) => !(isObject(item) && item.type === 'reasoning'));
  if (kept.length === input.length) return undefined;
  return { body: JSON.stringify({ ...body, input: kept }), dropped: ['reasoning the upstream could not verify (another organization issued it)'] };
}
