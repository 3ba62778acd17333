import { claimAt, groupsFrom, maySignIn, personFromClaims } from '../../../lambda/identity/claims.ts';

test('claims by name, by dotted path, and names that contain dots (namespaced claims)', () => {
  const claims = { groups: ['a'], realm_access: { roles: ['admin', 'dev'] }, 'https://example.com/groups': ['ns'], deep: { a: { b: 'x' } } };
  expect(claimAt(claims, 'groups')).toEqual(['a']);
  expect(claimAt(claims, 'realm_access.roles')).toEqual(['admin', 'dev']);
  expect(claimAt(claims, 'https://example.com/groups')).toEqual(['ns']);
  expect(claimAt(claims, 'deep.a.b')).toBe('x');
  expect(claimAt(claims, 'deep.a.b.c')).toBeUndefined();
  expect(claimAt(claims, 'missing.path')).toBeUndefined();
  // Not a way into prototypes.
  expect(claimAt(claims, 'groups.constructor')).toBeUndefined();
  expect(claimAt(claims, '__proto__')).toBeUndefined();
});

test('groups: a list or one string; other values, empty and overlong names dropped; duplicates once', () => {
  expect(groupsFrom(['a', 'b', 'a'])).toEqual(['a', 'b']);
  expect(groupsFrom('solo')).toEqual(['solo']);
  expect(groupsFrom([1, null, '', 'x'.repeat(300), 'ok'])).toEqual(['ok']);
  expect(groupsFrom({ a: 1 })).toEqual([]);
  expect(groupsFrom(undefined)).toEqual([]);
  expect(groupsFrom(Array.from({ length: 5_000 }, (_, i) => `g${i}`))).toHaveLength(1_000);
});

test('the person from an ID token, with configured email and groups claims', () => {
  const person = personFromClaims({ sub: 'u1', upn: 'u1@corp.example', name: 'U One', roles: ['gw'] }, { emailClaim: 'upn', groupsClaim: 'roles' });
  expect(person).toEqual({ sub: 'u1', email: 'u1@corp.example', name: 'U One', groups: ['gw'] });
  expect(personFromClaims({ sub: 'u2' }, { emailClaim: 'email', groupsClaim: 'groups' })).toEqual({ sub: 'u2', groups: [] });
});

test('allowedGroups: absent or empty lets everyone in; otherwise one shared group is needed', () => {
  const person = { sub: 's', groups: ['eng'] };
  expect(maySignIn(person, undefined)).toBe(true);
  expect(maySignIn(person, [])).toBe(true);
  expect(maySignIn(person, ['eng', 'ml'])).toBe(true);
  expect(maySignIn(person, ['ml'])).toBe(false);
  expect(maySignIn({ sub: 's', groups: [] }, ['ml'])).toBe(false);
});
