import type * as z from 'zod/mini';
import { describeIssue } from '../../config/issues.ts';
import { adminError } from '../http.ts';

/** A request body checked against its schema: the first problem said with its field, as a 400. */
export function parseBody<T extends z.ZodMiniType>(schema: T, body: unknown): z.infer<T> {
  const result = schema.safeParse(body, { reportInput: true });
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path.join('.') ?? '';
  throw adminError.invalid(`${path ? `${path}: ` : ''}${issue ? describeIssue(issue) : 'invalid'}`, path || undefined);
}
