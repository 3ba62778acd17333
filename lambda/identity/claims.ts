import type { IdentityConfig } from '../config/identity-schema.ts';
import type { Person } from './principal.ts';

/** Bounds on what an IdP's claims may make the gateway store per person. */
const MAX_GROUPS = 1_000;
const MAX_TEXT = 320;

/**
 * A claim by name, or by dotted path into nested objects (`realm_access.roles` in Keycloak). A
 * name that itself contains dots (Auth0's namespaced `https://example.com/groups`) is found as
 * it is first.
 */
export function claimAt(claims: Record<string, unknown>, path: string): unknown {
  if (Object.hasOwn(claims, path)) return claims[path];
  let value: unknown = claims;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** Groups from a claim: a list of strings, or one string; anything else is no groups. */
export function groupsFrom(value: unknown): string[] {
  const listed = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  const groups = listed.filter((group): group is string => typeof group === 'string' && group.length > 0 && group.length <= 256);
  return [...new Set(groups)].slice(0, MAX_GROUPS);
}

/** The person an ID token describes, with the configured claims for email and groups. */
export function personFromClaims(claims: Record<string, unknown>, config: Pick<IdentityConfig, 'emailClaim' | 'groupsClaim'>): Person {
  const person: Person = { sub: String(claims.sub), groups: groupsFrom(claimAt(claims, config.groupsClaim)) };
  const email = claimAt(claims, config.emailClaim);
  if (typeof email === 'string' && email !== '') person.email = email.slice(0, MAX_TEXT);
  if (typeof claims.name === 'string' && claims.name !== '') person.name = claims.name.slice(0, MAX_TEXT);
  return person;
}

/** Whether the person may sign in: `allowedGroups` absent or empty lets everyone the IdP vouches for in. */
export function maySignIn(person: Person, allowedGroups: readonly string[] | undefined): boolean {
  return allowedGroups === undefined || allowedGroups.length === 0 || person.groups.some((group) => allowedGroups.includes(group));
}
