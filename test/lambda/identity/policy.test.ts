import { createHash } from 'node:crypto';
import { IdentityConfigSchema } from '../../../lambda/config/identity-schema.ts';
import { parseRoutingConfig } from '../../../lambda/config/routing.ts';
import { expectedChecksum } from '../../support/managed-settings.ts';
import { effectiveCaps, mergeSettings, parseOverrides, resolvePolicy, settingsChecksum, settingsUuid } from '../../../lambda/identity/policy.ts';

const config = (extra: Record<string, unknown>) => IdentityConfigSchema.parse({ issuer: 'https://idp.example.com', clientId: 'gw', ...extra });

describe('caps: own override, then groups (min, or max), then the default, per period', () => {
  const caps = {
    default: { daily: 50, weekly: 150, monthly: 400 },
    groups: { interns: { daily: 5 }, ml: { monthly: 1000, daily: 80 }, execs: { monthly: null }, cheap: { monthly: 10 } },
  };

  test('the default applies to someone in no capped group', () => {
    expect(effectiveCaps(config({ caps }), ['engineering'], undefined)).toEqual({
      day: { limitMicroUsd: 50_000_000, source: { from: 'default' } },
      week: { limitMicroUsd: 150_000_000, source: { from: 'default' } },
      month: { limitMicroUsd: 400_000_000, source: { from: 'default' } },
    });
  });

  test('a group cap replaces the default for its period only; of several groups the smallest wins (min)', () => {
    const resolved = effectiveCaps(config({ caps }), ['ml', 'interns'], undefined);
    expect(resolved.day).toEqual({ limitMicroUsd: 5_000_000, source: { from: 'group', group: 'interns' } });
    expect(resolved.week).toEqual({ limitMicroUsd: 150_000_000, source: { from: 'default' } });
    expect(resolved.month).toEqual({ limitMicroUsd: 1_000_000_000, source: { from: 'group', group: 'ml' } });
  });

  test('groupMode max: the largest wins, and a group without a cap (null) wins over every cap', () => {
    const max = config({ caps: { ...caps, groupMode: 'max' } });
    expect(effectiveCaps(max, ['ml', 'interns'], undefined).day).toEqual({ limitMicroUsd: 80_000_000, source: { from: 'group', group: 'ml' } });
    expect(effectiveCaps(max, ['ml', 'execs', 'cheap'], undefined).month).toEqual({ limitMicroUsd: null, source: { from: 'group', group: 'execs' } });
    // Under min, a real cap beats a group's "no cap"; alone, "no cap" still beats the default.
    expect(effectiveCaps(config({ caps }), ['execs', 'cheap'], undefined).month).toEqual({ limitMicroUsd: 10_000_000, source: { from: 'group', group: 'cheap' } });
    expect(effectiveCaps(config({ caps }), ['execs'], undefined).month).toEqual({ limitMicroUsd: null, source: { from: 'group', group: 'execs' } });
  });

  test("the person's own override wins over groups and default, per period; null is no cap", () => {
    const resolved = effectiveCaps(config({ caps }), ['interns'], { caps: { daily: 7.5, monthly: null } });
    expect(resolved.day).toEqual({ limitMicroUsd: 7_500_000, source: { from: 'person' } });
    expect(resolved.week).toEqual({ limitMicroUsd: 150_000_000, source: { from: 'default' } });
    expect(resolved.month).toEqual({ limitMicroUsd: null, source: { from: 'person' } });
  });

  test('no caps configured: none', () => {
    expect(effectiveCaps(config({}), ['ml'], undefined)).toEqual({});
  });

  test('a group named like an Object member is only a group', () => {
    expect(effectiveCaps(config({ caps }), ['constructor', '__proto__', 'toString'], undefined).day).toEqual({ limitMicroUsd: 50_000_000, source: { from: 'default' } });
  });
});

describe('stored overrides', () => {
  test('read as stored; a malformed value throws (the request path fails closed)', () => {
    expect(parseOverrides(undefined)).toBeUndefined();
    expect(parseOverrides({})).toEqual({});
    expect(parseOverrides({ caps: { daily: 5, weekly: null, other: 'x' } })).toEqual({ caps: { daily: 5, weekly: null } });
    expect(() => parseOverrides({ caps: { daily: '5' } })).toThrow('daily cap override');
    expect(() => parseOverrides({ caps: { monthly: -1 } })).toThrow('monthly cap override');
    expect(() => parseOverrides({ caps: [1] })).toThrow('not a map');
  });
});

describe('policies: the first entry meeting the groups, merged onto the base', () => {
  const policies = [
    { groups: ['contractors'], models: ['claude-haiku-*'], managedSettings: { availableModels: ['haiku'], env: { A: 'contractor' }, permissions: { deny: ['Bash(curl:*)'] } } },
    { groups: ['ml', 'contractors'], models: ['claude-*', 'gpt-*'] },
    { models: ['claude-*'], managedSettings: { env: { A: 'base', B: 'base' }, permissions: { allow: ['Read'], deny: ['WebFetch'] } } },
  ];

  test('a contractor: their models replace the base list; settings merge (objects recursively, arrays replace)', () => {
    const policy = resolvePolicy(config({ policies }), { groups: ['contractors', 'ml'] }, undefined);
    expect(policy.models).toEqual(['claude-haiku-*']);
    expect(policy.policyEntries).toEqual([2, 0]);
    expect(policy.managedSettings).toEqual({ env: { A: 'contractor', B: 'base' }, permissions: { allow: ['Read'], deny: ['Bash(curl:*)'] }, availableModels: ['haiku'] });
  });

  test('an entry without managed settings keeps the base settings; without models keeps the base models', () => {
    const policy = resolvePolicy(config({ policies }), { groups: ['ml'] }, undefined);
    expect(policy.models).toEqual(['claude-*', 'gpt-*']);
    expect(policy.managedSettings).toEqual(policies[2]?.managedSettings);
    expect(resolvePolicy(config({ policies }), { groups: [] }, undefined).models).toEqual(['claude-*']);
  });

  test('no base and no match: no model limit and no managed settings', () => {
    const policy = resolvePolicy(config({ policies: policies.slice(0, 2) }), { groups: ['engineering'] }, undefined);
    expect(policy.models).toBeUndefined();
    expect(policy.managedSettings).toBeUndefined();
    expect(policy.policyEntries).toEqual([]);
  });

  test('pools of the groups the person is in (monthly), and the configured next step', () => {
    const policy = resolvePolicy(config({ caps: { pools: { ml: { monthly: 20_000 }, other: { monthly: 5 } }, blockedMessage: 'request more at https://go/limits' } }), { groups: ['ml', 'eng'] }, undefined);
    expect(policy.pools).toEqual([{ group: 'ml', limitMicroUsd: 20_000_000_000 }]);
    expect(policy.blockedMessage).toBe('request more at https://go/limits');
  });

  test('merging never reaches a prototype', () => {
    const hostile = JSON.parse('{"__proto__": {"polluted": true}, "env": {"__proto__": {"x": 1}}}') as Record<string, unknown>;
    const merged = mergeSettings({ env: { A: '1' } }, hostile);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(JSON.stringify(merged)).toBe('{"env":{"A":"1","__proto__":{"x":1}},"__proto__":{"polluted":true}}');
  });
});

describe('the managed settings checksum', () => {
  test('sha256: and the hex SHA-256 of the key-sorted compact JSON', () => {
    const settings = { permissions: { deny: ['WebFetch'], allow: ['Read', 'Bash(git:*)'] }, env: { ZED: '1', ALPHA: 'é ✓' }, availableModels: ['haiku', 'sonnet'], model: 'sonnet', cleanupPeriodDays: 7, flag: true, none: null };
    expect(settingsChecksum(settings)).toBe(expectedChecksum(settings));
    expect(settingsChecksum({})).toBe(`sha256:${createHash('sha256').update('{}').digest('hex')}`);
    // Order of members does not matter; any value does.
    expect(settingsChecksum({ b: 1, a: { d: 2, c: 3 } })).toBe(settingsChecksum({ a: { c: 3, d: 2 }, b: 1 }));
    expect(settingsChecksum({ a: 1 })).not.toBe(settingsChecksum({ a: 2 }));
  });

  test('the uuid is a version 8 UUID that follows the checksum', () => {
    const one = settingsUuid(settingsChecksum({ a: 1 }));
    expect(one).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(settingsUuid(settingsChecksum({ a: 1 }))).toBe(one);
    expect(settingsUuid(settingsChecksum({ a: 2 }))).not.toBe(one);
  });
});

test('the config takes one base policy at most, pools per month only, null group caps, and names what is wrong', () => {
  const base = { upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }] };
  const identity = { issuer: 'https://idp.example.com', clientId: 'gw' };
  expect(() => parseRoutingConfig({ ...base, identity: { ...identity, policies: [{ models: ['a'] }, { groups: ['g'] }, { models: ['b'] }] } })).toThrow('identity.policies.2: a second policy without "groups" (the first is policies.0)');
  expect(() => parseRoutingConfig({ ...base, identity: { ...identity, caps: { pools: { ml: { daily: 5 } } } } })).toThrow('identity.caps.pools.ml');
  expect(() => parseRoutingConfig({ ...base, identity: { ...identity, caps: { default: { daily: null } } } })).toThrow('identity.caps.default.daily');
  expect(parseRoutingConfig({ ...base, identity: { ...identity, caps: { groups: { execs: { monthly: null } }, pools: { ml: { monthly: 1 } } } } }).identity?.caps?.groups?.execs).toEqual({ monthly: null });
});
