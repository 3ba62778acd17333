import { createRouter, parseRoutingConfig, type Target } from '../../../lambda/config/routing.ts';
import { attemptOrder, stickinessKey, unitHash } from '../../../lambda/upstream/target-order.ts';

const router = createRouter(
  parseRoutingConfig({
    upstreams: { a: { type: 'simulator' }, b: { type: 'simulator' }, c: { type: 'simulator' }, f: { type: 'simulator' } },
    routes: [{ model: '*', targets: [{ upstream: 'a', weight: 3 }, { upstream: 'b', weight: 1 }], fallbacks: [{ upstream: 'c' }, { upstream: 'f' }] }],
  }),
);
const match = router.select('m')!;
const names = (targets: Target[]) => targets.map((target) => target.upstream.name);
const none = () => false;

test('one conversation keeps its target: the same order for the same key, every time', () => {
  const first = names(attemptOrder(match, 'session:abc', none));
  for (let i = 0; i < 100; i++) expect(names(attemptOrder(match, 'session:abc', none))).toEqual(first);
  expect(first.slice(2)).toEqual(['c', 'f']);
});

test('conversations spread over the primaries in proportion to their weights', () => {
  const counts = { a: 0, b: 0 };
  for (let i = 0; i < 4_000; i++) counts[names(attemptOrder(match, `session:${i}`, none))[0] as 'a' | 'b']++;
  expect(counts.a / 4_000).toBeGreaterThan(0.7);
  expect(counts.a / 4_000).toBeLessThan(0.8);
});

test('a target cooling down goes last; only its own conversations move', () => {
  const coolA = (target: Target) => target.upstream.name === 'a';
  const keys = Array.from({ length: 200 }, (_, i) => `session:${i}`);
  for (const key of keys) {
    const before = names(attemptOrder(match, key, none));
    const after = names(attemptOrder(match, key, coolA));
    expect(after.at(-1)).toBe('a');
    if (before[0] === 'b') expect(after[0]).toBe('b');
    else expect(after).toEqual(['b', 'c', 'f', 'a']);
  }
});

test('with every target cooling down, all are still tried', () => {
  expect(names(attemptOrder(match, 'k', () => true)).sort()).toEqual(['a', 'b', 'c', 'f']);
});

test('the stickiness key: Claude Code session, then Codex prompt_cache_key, then the gateway key', () => {
  expect(stickinessKey({ 'x-claude-code-session-id': 's1' }, { prompt_cache_key: 'p1' }, 'key_1')).toBe('session:s1');
  expect(stickinessKey({}, { prompt_cache_key: 'p1' }, 'key_1')).toBe('cache:p1');
  expect(stickinessKey({}, { prompt_cache_key: 7 }, 'key_1')).toBe('key:key_1');
  expect(stickinessKey({}, undefined, undefined)).toBe('key:anonymous');
});

test('unitHash stays strictly inside (0, 1)', () => {
  for (let i = 0; i < 1_000; i++) {
    const u = unitHash(String(i));
    expect(u).toBeGreaterThan(0);
    expect(u).toBeLessThan(1);
  }
});
