import type { AttributeValue, WriteRequest } from '@aws-sdk/client-dynamodb';
import type { DynamoApi } from '../lambda/aws/dynamodb.ts';
import { foldCounters, histogramCounter, type RollupCounters, type RollupIncrement } from '../lambda/usage/rollup-fold.ts';
import { STATS_TABLE } from '../lambda/usage/stats-table.ts';
import { seededRandom } from '../test/support/chunking.ts';

/**
 * A year of usage rollups as npm start's writer leaves them, for the console's benchmark
 * (bench/console.ts): the traffic of `requestsPerMonth` requests from `people` people (each in a
 * few of `groups` groups, with their own keys) and automation keys, on `models` models over
 * `upstreams` upstreams; weekdays busier than weekends, office hours busier than nights.
 *
 * The rows are made by the one fold (lambda/usage/rollup-fold.ts, `foldCounters`), one step per
 * person, key, model and hour (per day before the hour rows' 35 days: older hour rows would have
 * expired), not per request: the same rows and sums, in seconds instead of hours. They are written
 * as the items npm start's ADDs leave (counters and `expiresAt`), 25 to a BatchWriteItem.
 */
export interface SeedShape {
  /** Days of history up to now. */
  days: number;
  requestsPerMonth: number;
  people: number;
  /** Keys not tied to a person (CI, scripts). */
  automationKeys: number;
  groups: number;
  models: number;
  upstreams: number;
}

export const FULL_SHAPE: SeedShape = { days: 365, requestsPerMonth: 1_000_000, people: 250, automationKeys: 50, groups: 30, models: 12, upstreams: 4 };
export const SMOKE_SHAPE: SeedShape = { days: 3, requestsPerMonth: 20_000, people: 12, automationKeys: 3, groups: 4, models: 3, upstreams: 2 };

const DAY_MS = 86_400_000;
const HOUR_RETENTION_DAYS = 35;
/** Share of a weekday's requests in each UTC hour (a team spread over European and American office hours). */
const HOURS = [1, 1, 1, 1, 1, 2, 4, 7, 9, 10, 10, 9, 8, 9, 10, 10, 9, 7, 5, 4, 3, 2, 1, 1];
const HOUR_TOTAL = HOURS.reduce((sum, weight) => sum + weight, 0);
/** Where requests' times to first byte fall (the histogram's 20 buckets): mostly 0.2 to 2 s. */
const TTFB_SHARE = [0, 0, 0, 1, 2, 4, 8, 12, 14, 16, 13, 10, 7, 5, 4, 2, 1, 0.6, 0.3, 0.1];
/** Per-million-token prices (input, cache read, cache write, output) of a few model families. */
const PRICES = [
  [5, 0.5, 6.25, 25],
  [3, 0.3, 3.75, 15],
  [1, 0.1, 1.25, 5],
  [1.25, 0.125, 0, 10],
];

interface Actor {
  sub?: string;
  keys: string[];
  groups: string[];
  /** Relative activity (mean 1). */
  weight: number;
  models: number[];
}

export interface Population {
  people: { sub: string; email: string; name: string; groups: string[] }[];
  keys: { id: string; name: string; owner?: string }[];
  models: string[];
  upstreams: string[];
}

function population(shape: SeedShape, next: () => number): { actors: Actor[]; population: Population } {
  const models = Array.from({ length: shape.models }, (_, i) => (i % 4 === 3 ? `gpt-5.${i}` : `claude-${['opus', 'sonnet', 'haiku'][i % 3]}-${4 + Math.floor(i / 4)}`));
  const upstreams = Array.from({ length: shape.upstreams }, (_, i) => ['anthropic', 'bedrock-us', 'openai', 'bedrock-eu'][i] ?? `upstream-${i}`);
  const groups = Array.from({ length: shape.groups }, (_, i) => `team-${String(i).padStart(2, '0')}`);
  const actors: Actor[] = [];
  const people: Population['people'] = [];
  const keys: Population['keys'] = [];
  const keyId = (n: number) => `key_${n.toString(16).padStart(16, '0')}`;
  for (let i = 0; i < shape.people; i++) {
    const sub = `00u${i.toString(36).padStart(6, '0')}`;
    const own = [keyId(keys.length)];
    keys.push({ id: own[0] as string, name: `laptop-${i}`, owner: sub });
    if (next() < 0.2) {
      own.push(keyId(keys.length));
      keys.push({ id: own[1] as string, name: `ci-${i}`, owner: sub });
    }
    const mine = [...new Set(Array.from({ length: 2 + Math.floor(next() * 3) }, () => groups[Math.floor(next() * groups.length)] as string))];
    people.push({ sub, email: `dev${i}@example.com`, name: `Developer ${i}`, groups: mine });
    actors.push({ sub, keys: own, groups: mine, weight: 0.3 + 1.4 * next(), models: [Math.floor(next() * models.length), Math.floor(next() * models.length)] });
  }
  for (let i = 0; i < shape.automationKeys; i++) {
    const id = keyId(keys.length);
    keys.push({ id, name: `automation-${i}` });
    actors.push({ keys: [id], groups: [], weight: 0.5 + next(), models: [Math.floor(next() * models.length), Math.floor(next() * models.length)] });
  }
  return { actors, population: { people, keys, models, upstreams } };
}

/** The counters `count` requests of one model add (tokens and prices of a coding agent's turns). */
function countersOf(count: number, model: number, next: () => number): RollupCounters {
  const input = Math.round(count * (1_500 + 3_000 * next()));
  const cacheRead = Math.round(count * (15_000 + 30_000 * next()));
  const cacheWrite = Math.round(count * (500 + 3_000 * next()));
  const output = Math.round(count * (300 + 1_000 * next()));
  const [inRate, readRate, writeRate, outRate] = PRICES[model % PRICES.length] as number[];
  const counters: RollupCounters = {
    requests: count,
    inputTokens: input,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    outputTokens: output,
    costMicroUsd: Math.round(input * (inRate as number) + cacheRead * (readRate as number) + cacheWrite * (writeRate as number) + output * (outRate as number)),
  };
  const errors = Math.floor(count * 0.012 + next());
  if (errors > 0) counters.errors = errors;
  const fallbacks = Math.floor(count * 0.004 + next() * 0.5);
  if (fallbacks > 0) counters.fallbacks = fallbacks;
  // The requests spread over the histogram's buckets (largest remainders keep the sum exact).
  const share = TTFB_SHARE.map((weight) => (weight / 100) * count);
  const whole = share.map(Math.floor);
  let left = count - whole.reduce((sum, value) => sum + value, 0);
  for (const i of share.map((value, index) => [value - Math.floor(value), index] as const).sort((a, b) => b[0] - a[0]).map(([, index]) => index)) {
    if (left-- <= 0) break;
    whole[i] = (whole[i] as number) + 1;
  }
  whole.forEach((value, i) => value > 0 && (counters[histogramCounter(i)] = value));
  return counters;
}

function itemOf(row: RollupIncrement): Record<string, AttributeValue> {
  const item: Record<string, AttributeValue> = { [STATS_TABLE.partitionKey]: { S: row.pk }, [STATS_TABLE.sortKey]: { S: row.sk }, [STATS_TABLE.ttlAttribute]: { N: String(row.expiresAt) } };
  for (const [name, value] of Object.entries(row.counters)) if (value) item[name] = { N: String(value) };
  return item;
}

async function writeRows(client: DynamoApi, tableName: string, rows: RollupIncrement[], parallel = 6): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let start = next; start < rows.length; start = next) {
      next += 25;
      let requests: WriteRequest[] = rows.slice(start, start + 25).map((row) => ({ PutRequest: { Item: itemOf(row) } }));
      while (requests.length > 0) {
        const answer = await client.call('BatchWriteItem', { RequestItems: { [tableName]: requests } });
        requests = answer.UnprocessedItems?.[tableName] ?? [];
      }
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

/**
 * Seeds `shape` up to `now` into the stats table; returns who exists (people, keys, models) for
 * the rest of the seeding, and how many rows of each granularity were written.
 */
export async function seedRollups(client: DynamoApi, tableName: string, shape: SeedShape, now: Date, log: (text: string) => void = () => {}): Promise<{ population: Population; rows: Record<'H' | 'D' | 'M', number>; requests: number }> {
  // The same shape always seeds the same rows.
  const next = seededRandom(20261126);
  const { actors, population: who } = population(shape, next);
  const rows: Record<'H' | 'D' | 'M', number> = { H: 0, D: 0, M: 0 };
  let requests = 0;
  const nowSeconds = now.getTime() / 1000;
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const first = today - (shape.days - 1) * DAY_MS;
  // A weekday's requests, so that a month (about 21.7 weekdays and 8.7 weekend days at 15 %) adds up to requestsPerMonth.
  const weekday = shape.requestsPerMonth / (21.7 + 8.7 * 0.15);
  const totalWeight = actors.reduce((sum, actor) => sum + actor.weight, 0);
  let pending = new Map<string, RollupIncrement>();
  const flush = async () => {
    const live = [...pending.values()].filter((row) => row.expiresAt > nowSeconds);
    for (const row of live) rows[row.pk.split('#')[1] as 'H' | 'D' | 'M']++;
    await writeRows(client, tableName, live);
    pending = new Map();
  };
  let month = new Date(first).toISOString().slice(0, 7);
  for (let day = first; day <= today; day += DAY_MS) {
    const date = new Date(day);
    if (date.toISOString().slice(0, 7) !== month) {
      await flush();
      log(`seeded rollups through ${month}`);
      month = date.toISOString().slice(0, 7);
    }
    const weekend = date.getUTCDay() === 0 || date.getUTCDay() === 6;
    const dayRequests = weekday * (weekend ? 0.15 : 1) * (0.85 + 0.3 * next());
    const byHour = today - day < HOUR_RETENTION_DAYS * DAY_MS;
    // Today only up to the current hour.
    const hours = day === today ? now.getUTCHours() + 1 : 24;
    for (const actor of actors) {
      if (next() > (weekend ? 0.15 : 0.9)) continue;
      const mine = (dayRequests * actor.weight) / totalWeight / (weekend ? 0.15 : 0.9);
      for (const [share, model] of [[0.7, actor.models[0] as number], [0.3, actor.models[1] as number]] as const) {
        const modelRequests = mine * share;
        const key = actor.keys[next() < 0.85 ? 0 : actor.keys.length - 1] as string;
        const upstream = who.upstreams[(model + (next() < 0.1 ? 1 : 0)) % who.upstreams.length] as string;
        const source = { keyId: key, groups: actor.groups, modelDimension: who.models[model] as string, upstream, ...(actor.sub ? { personSub: actor.sub } : {}) };
        const slots = byHour ? Array.from({ length: hours }, (_, hour) => [hour, HOURS[hour] as number] as const) : [[12, HOUR_TOTAL] as const];
        for (const [hour, weight] of slots) {
          const count = Math.floor((modelRequests * weight) / HOUR_TOTAL + next());
          if (count === 0) continue;
          requests += count;
          foldCounters({ ...source, at: new Date(day + hour * 3_600_000 + 1_000) }, countersOf(count, model, next), pending);
        }
      }
    }
  }
  await flush();
  log(`seeded rollups through ${month}`);
  return { population: who, rows, requests };
}
