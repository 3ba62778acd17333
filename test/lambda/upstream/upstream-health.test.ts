import { createRouter, parseRoutingConfig } from '../../../lambda/config/routing.ts';
import { UpstreamHealth } from '../../../lambda/upstream/upstream-health.ts';

const router = createRouter(parseRoutingConfig({ upstreams: { a: { type: 'anthropic', apiKeyEnv: ['K1', 'K2', 'K3'] } }, routes: [{ model: '*', upstream: 'a' }] }));
const target = router.select('m')!.targets[0]!;
const upstream = target.upstream;

function clock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

test('a target cools down after repeated failures, is tried again after the cooldown, and one more failure cools it again', () => {
  const time = clock();
  const health = new UpstreamHealth({ failuresToCool: 3, cooldownMs: 30_000, now: time.now });
  health.targetFailed(target);
  health.targetFailed(target);
  expect(health.coolingDown(target)).toBe(false);
  health.targetFailed(target);
  expect(health.coolingDown(target)).toBe(true);
  time.advance(30_001);
  expect(health.coolingDown(target)).toBe(false);
  health.targetFailed(target);
  expect(health.coolingDown(target)).toBe(true);
  time.advance(30_001);
  health.targetSucceeded(target);
  health.targetFailed(target);
  expect(health.coolingDown(target)).toBe(false);
});

test('a conversation keeps its key; a rested key is skipped until its rest ends', () => {
  const time = clock();
  const health = new UpstreamHealth({ now: time.now, rateLimitRestMs: 30_000, rejectedRestMs: 600_000 });
  const mine = health.pickKey(upstream, 3, 'session:x');
  for (let i = 0; i < 50; i++) expect(health.pickKey(upstream, 3, 'session:x')).toBe(mine);
  expect(health.restKey(upstream, mine, 429, 5_000)).toBe(5_000);
  const other = health.pickKey(upstream, 3, 'session:x');
  expect(other).not.toBe(mine);
  expect(health.availableKeys(upstream, 3)).toBe(2);
  time.advance(5_001);
  expect(health.pickKey(upstream, 3, 'session:x')).toBe(mine);
  expect(health.restKey(upstream, mine, 401, undefined)).toBe(600_000);
  expect(health.restKey(upstream, other, 429, undefined)).toBe(30_000);
  expect(health.availableKeys(upstream, 3)).toBe(1);
});

test('requests spread over the keys across conversations', () => {
  const health = new UpstreamHealth();
  const used = new Set(Array.from({ length: 60 }, (_, i) => health.pickKey(upstream, 3, `session:${i}`)));
  expect([...used].sort()).toEqual([0, 1, 2]);
});

test('with every key resting, the one whose rest ends first is used', () => {
  const time = clock();
  const health = new UpstreamHealth({ now: time.now });
  health.restKey(upstream, 0, 429, 9_000);
  health.restKey(upstream, 1, 429, 1_000);
  health.restKey(upstream, 2, 429, 5_000);
  expect(health.pickKey(upstream, 3, 'any')).toBe(1);
});
