import type { AdminContext } from '../context.ts';
import { periodSummary } from './overview.ts';
import { asOf } from './rollup-views.ts';

/**
 * GET /admin/api/upstreams: each upstream of the routing config with two kinds of facts, said
 * apart in the answer and on the page:
 * - `instance`: what the gateway instance that answers this call has learned (targets cooling
 *   down after failures, API keys resting after a 429 or 401/403). Each Lambda instance learns on
 *   its own (lambda/upstream/upstream-health.ts); npm start is one instance.
 * - `last24h`: every instance's requests, errors, fallbacks taken and time to first byte, from the
 *   upstream rollups (one or two Queries).
 */
const DAY_MS = 86_400_000;

export async function upstreams(context: AdminContext) {
  const now = context.now();
  const from = new Date(now - DAY_MS);
  const [totals, freshness] = await Promise.all([context.rollups ? context.rollups.totals('upstream', from, new Date(now), 'H') : undefined, asOf(context)]);
  const byName = new Map(totals?.map((entry) => [entry.value, entry.totals]));
  const health = context.health.snapshot();
  return {
    instance: { startedAt: new Date(context.startedAt).toISOString(), now: new Date(now).toISOString() },
    window: { from: from.toISOString(), to: new Date(now).toISOString(), available: totals !== undefined, ...freshness },
    upstreams: [...context.router.upstreams.values()].map((upstream) => {
      const used = byName.get(upstream.name);
      return {
        name: upstream.name,
        type: upstream.type,
        // The host only: a base URL may carry a path, never a credential here, but the host is what an operator recognizes.
        host: upstream.aws ? `${upstream.aws.service}.${upstream.aws.region}` : safeHost(upstream.baseUrl),
        keys: upstream.apiKeyEnvs.length,
        instance: {
          targets: health.targets.filter((target) => target.upstream === upstream.name).map(({ model, failures, coolingDownUntil }) => ({ model, failures, coolingDownUntil: coolingDownUntil === undefined ? null : new Date(coolingDownUntil).toISOString() })),
          restingKeys: health.restingKeys.filter((key) => key.upstream === upstream.name).map(({ index, until }) => ({ index, until: new Date(until).toISOString() })),
        },
        last24h: used ? periodSummary(used) : null,
      };
    }),
  };
}

function safeHost(baseUrl: string): string {
  try {
    return new URL(baseUrl).host;
  } catch {
    return '';
  }
}
