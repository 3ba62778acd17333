import type * as z from 'zod/mini';
import { GatewayError } from '../errors.ts';

type Schema<T> = z.ZodMiniType<T>;

/**
 * Validates a parsed body against a request schema, turning the first problem into a 400 that
 * names the field the way the providers do (`max_tokens: Field required`).
 */
export function validateBody<T>(schema: Schema<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path.join('.') || 'body';
  const missing = issue?.code === 'invalid_type' && issue.message.endsWith('received undefined');
  const message = missing ? 'Field required' : (issue?.message ?? 'invalid value');
  throw new GatewayError('invalid_request', `${path}: ${message}`, { param: path });
}
