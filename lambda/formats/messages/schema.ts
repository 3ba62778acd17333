import * as z from 'zod/mini';
import { ModelName } from '../model-name.ts';

/**
 * What the gateway itself reads from a Messages request. Objects are loose: every field the
 * gateway does not read passes through to the upstream untouched.
 * @see docs/wire-formats.md §1.2
 * @see https://docs.claude.com/en/api/messages
 */
const Message = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(z.unknown())]),
});

export const MessagesRequest = z.looseObject({
  model: ModelName,
  max_tokens: z.int().check(z.minimum(0)),
  messages: z.array(Message),
  stream: z.optional(z.boolean()),
});

export const CountTokensRequest = z.looseObject({
  model: ModelName,
  messages: z.array(Message),
});

export type MessagesRequest = z.infer<typeof MessagesRequest>;
