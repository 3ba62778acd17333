import * as z from 'zod/mini';
import type { Family } from '../routes.ts';
import { parseJsonObject } from './json-fields.ts';
import { isRecord } from '../observability/usage.ts';
import { eventTypeOf, parseSseEvent } from './sse/event-splitter.ts';

/** Model names are short; a bound keeps hostile ones out of routing, logs and metrics. */
export const MAX_MODEL_NAME = 256;
export const ModelName = z.string().check(z.minLength(1), z.maxLength(MAX_MODEL_NAME));

/**
 * When a route renames the model, answers must name the model the client asked for: Claude Code
 * treats a different model in `message_start` as another model's turn and drops its thinking
 * blocks from the next request (seen with the real CLI). Only the few events that carry the model
 * are rewritten: `message_start`, and the Responses events that carry the `response` object.
 */
export function modelNameRestorer(family: Family, clientModel: string): (event: Buffer) => Buffer | undefined {
  return (event) => {
    const type = eventTypeOf(event);
    const carrier = family === 'messages' ? (type === 'message_start' ? 'message' : undefined) : type?.startsWith('response.') ? 'response' : undefined;
    if (carrier === undefined) return undefined;
    const data = parseJsonObject(parseSseEvent(event).data);
    const holder = data?.[carrier];
    if (!isRecord(holder) || typeof holder.model !== 'string' || holder.model === clientModel) return undefined;
    holder.model = clientModel;
    return Buffer.from(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
  };
}
