/**
 * Model-name globs as used by routes and key allowlists: `*` matches any run of characters,
 * `?` exactly one; everything else is literal and matching is case-sensitive.
 * @example globToRegExp('claude-*').test('claude-sonnet-5') // true
 */
export function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

export function isGlob(pattern: string): boolean {
  return pattern.includes('*') || pattern.includes('?');
}

/** True when `name` matches any of `globs`. */
export function matchesAny(globs: readonly RegExp[], name: string): boolean {
  return globs.some((glob) => glob.test(name));
}
