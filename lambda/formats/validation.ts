import type * as z from 'zod/mini';
import { GatewayError } from '../errors.ts';

type Issue = z.core.$ZodIssue;

/**
 * Validates a parsed body against a request schema, turning the first problem into a 400 that
 * names the field the way the providers do (`max_tokens: Field required`). zod/mini carries no
 * message locale (that is most of its size saving), so messages are composed here from the
 * issue codes.
 */
export function validateBody<T>(schema: z.ZodMiniType<T>, body: Record<string, unknown>): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0] as Issue;
  const path = issue.path.join('.') || 'body';
  throw new GatewayError('invalid_request', `${path}: ${describeIssue(issue, valueAt(body, issue.path))}`, { param: path });
}

function describeIssue(issue: Issue, value: unknown): string {
  if (value === undefined) return 'Field required';
  switch (issue.code) {
    case 'invalid_type':
      return `Input should be ${article(issue.expected === 'number' && Number.isFinite(value) ? 'integer' : issue.expected)}`;
    case 'too_small':
      return issue.origin === 'string' && issue.minimum === 1 ? 'String should not be empty' : `Input should be at least ${issue.minimum}`;
    case 'too_big':
      return issue.origin === 'string' ? `String should have at most ${issue.maximum} characters` : `Input should be at most ${issue.maximum}`;
    case 'invalid_union': {
      const expected = issue.errors.flatMap((errors) => errors.map((inner) => (inner.code === 'invalid_type' ? inner.expected : undefined))).filter(Boolean);
      return expected.length > 0 ? `Input should be ${expected.map((type) => article(String(type))).join(' or ')}` : 'Invalid input';
    }
    default:
      return 'Invalid input';
  }
}

/** `a string`, `an object`: a type name with its indefinite article. */
export function article(type: string): string {
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

function valueAt(body: unknown, path: readonly PropertyKey[]): unknown {
  let value = body;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
