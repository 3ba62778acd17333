import type * as z from 'zod/mini';
import { article } from '../formats/validation.ts';

/** zod/mini's message when a schema gives none of its own (it carries no message locale). */
const GENERIC = 'Invalid input';

/**
 * What is wrong, in words, for one config issue: the schema's own message where it has one,
 * otherwise said from the issue code.
 */
export function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.message && issue.message !== GENERIC) return issue.message;
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'required';
      return `must be ${issue.expected === 'int' ? 'a whole number' : article(issue.expected)}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
    case 'too_small':
      if (issue.origin === 'string') return 'must not be empty';
      return issue.origin === 'array' ? `needs at least ${issue.minimum} entr${issue.minimum === 1 ? 'y' : 'ies'}` : `must be at least ${issue.minimum}`;
    case 'too_big':
      return `must be at most ${issue.maximum}`;
    case 'unrecognized_keys':
      return `unknown field(s) ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
    case 'invalid_union':
      return 'is not any of the accepted forms';
    default:
      return issue.message;
  }
}
