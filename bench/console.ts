import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dataFolderHolder } from '../bin/local/data-folder.ts';
import { localDynamo, LOCAL_IDENTITY_TABLE, LOCAL_KEY_TABLE, LOCAL_STATS_TABLE } from '../bin/local/embedded-store.ts';
import { mintKey } from '../lambda/auth/issue-key.ts';
import { DynamoKeyStore } from '../lambda/auth/key-store.ts';
import { AuditLog } from '../lambda/identity/store/audit.ts';
import { PeopleStore } from '../lambda/identity/store/people.ts';
import { IdentityTable } from '../lambda/identity/store/table.ts';
import type { BenchConfig } from './config.ts';
import { seedRollups, type Population } from './console-seed.ts';
import { percentile } from './stats.ts';

/**
 * The console's benchmark phase (docs/console.md, "Speed"): the real npm start, its store seeded
 * with a year of usage rollups at 1M requests a month (bench/console-seed.ts), people, keys and a
 * day of audit events; then every admin API call the page makes, one after another with an admin
 * key, timed from request to the last byte of the answer. The target: 300 ms at p95 for each.
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DAY_MS = 86_400_000;

export interface ConsoleCall {
  id: string;
  label: string;
  path: string;
}

/** Every call the page makes, as each view makes it (the explorer with its usual choices). */
export function consoleCalls(population: Population, now: number): ConsoleCall[] {
  const range = (days: number) => `from=${new Date(now - days * DAY_MS).toISOString()}&to=${new Date(now).toISOString()}`;
  return [
    { id: 'page', label: 'GET /admin (the page)', path: '/admin' },
    { id: 'session', label: 'session', path: '/admin/api/session' },
    { id: 'overview.month', label: 'overview (top of the month)', path: '/admin/api/overview' },
    { id: 'overview.week', label: 'overview (top of the week)', path: '/admin/api/overview?period=week' },
    { id: 'overview.day', label: 'overview (top of today)', path: '/admin/api/overview?period=day' },
    { id: 'usage.all.24h', label: 'spend: total, 24 h by hour', path: `/admin/api/usage?metric=cost&by=none&${range(1)}` },
    { id: 'usage.model.7d', label: 'spend: by model, 7 days by day', path: `/admin/api/usage?metric=cost&by=model&${range(7)}` },
    { id: 'usage.model.7d.hourly', label: 'spend: by model, 7 days by hour', path: `/admin/api/usage?metric=cost&by=model&granularity=hour&${range(7)}` },
    { id: 'usage.person.30d', label: 'spend: by person, 30 days', path: `/admin/api/usage?metric=cost&by=person&${range(30)}` },
    { id: 'usage.key.90d', label: 'requests: by key, 90 days', path: `/admin/api/usage?metric=requests&by=key&${range(90)}` },
    { id: 'usage.group.12mo', label: 'spend: by group, 12 months', path: `/admin/api/usage?metric=cost&by=group&${range(365)}` },
    { id: 'usage.tokens.30d', label: 'tokens split, 30 days', path: `/admin/api/usage?metric=tokens&by=none&${range(30)}` },
    { id: 'usage.csv', label: 'spend by model, 30 days, as CSV', path: `/admin/api/usage?metric=cost&by=model&format=csv&${range(30)}` },
    { id: 'keys', label: 'keys (first page)', path: '/admin/api/keys' },
    { id: 'people', label: 'people', path: '/admin/api/people' },
    { id: 'person', label: 'a person', path: `/admin/api/people/${encodeURIComponent(population.people[0]?.sub ?? 'nobody')}` },
    { id: 'upstreams', label: 'upstreams', path: '/admin/api/upstreams' },
    { id: 'audit', label: 'audit trail (today)', path: '/admin/api/audit' },
  ];
}

interface Started {
  url: string;
  child: ChildProcess;
  output: () => string;
}

/** npm start's entry on a fresh data folder, on any free port; resolves once it is ready. */
async function startNpmStart(dataDir: string, configPath: string): Promise<Started> {
  const child = spawn(process.execPath, ['bin/dev-server.ts'], { cwd: ROOT, env: { ...process.env, GATEWAY_DATA_DIR: dataDir, GATEWAY_CONFIG: configPath, PORT: '0', GATEWAY_LOG: 'off' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk) => (output = `${output}${chunk}`.slice(-20_000)));
  child.stderr?.on('data', (chunk) => (output = `${output}${chunk}`.slice(-20_000)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not start:\n${output}`)), 30_000);
    child.stdout?.on('data', () => {
      const match = /Gateway listening on (http:\/\/\S+)/.exec(output);
      if (match && output.includes('\nReady.')) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    });
    child.once('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${output}`)));
  });
  return { url, child, output: () => output };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await gone;
  clearTimeout(timer);
}

/** People, their keys and a day of audit events beside the rollups; an admin key for the calls. */
async function seedTheRest(endpoint: string, population: Population, now: number): Promise<string> {
  const client = localDynamo(endpoint);
  const keys = new DynamoKeyStore(LOCAL_KEY_TABLE, client);
  for (const key of population.keys) await keys.put(mintKey({ id: key.id, name: key.name, ...(key.owner ? { owner: key.owner } : {}) }).record);
  const table = new IdentityTable(LOCAL_IDENTITY_TABLE, client);
  const people = new PeopleStore(table);
  for (const person of population.people) await people.seen({ sub: person.sub, email: person.email, name: person.name, groups: person.groups }, now - Math.floor(Math.random() * 30 * DAY_MS));
  const audit = new AuditLog(table, () => {});
  for (let i = 0; i < 150; i++) await audit.record({ type: i % 3 === 0 ? 'key_updated' : 'sign_in', sub: population.people[i % population.people.length]?.sub, ip: '10.0.0.1', via: 'bench', key: population.keys[i % population.keys.length]?.id }, now - i * 60_000);
  const admin = mintKey({ name: 'bench-admin', role: 'admin' });
  await keys.put(admin.record);
  return admin.key;
}

export interface ConsoleResults {
  figures: Record<string, number>;
  table: string;
  errors: string[];
}

export async function consolePhase(config: BenchConfig, log: (text: string) => void): Promise<ConsoleResults> {
  const { shape, warmup, samples } = config.console;
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-console-'));
  const configPath = join(dataDir, 'gateway.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      upstreams: Object.fromEntries(['anthropic', 'bedrock-us', 'openai', 'bedrock-eu'].slice(0, shape.upstreams).map((name) => [name, { type: 'simulator' }])),
      routes: [{ model: '*', upstream: 'anthropic' }],
      // Sign-in configured (people, pools), never used: nothing here reaches the issuer.
      identity: { issuer: 'http://127.0.0.1:9/unused', clientId: 'bench', caps: { default: { daily: 50, weekly: 150, monthly: 400 }, pools: { 'team-00': { monthly: 20_000 }, 'team-01': { monthly: 5_000 } } } },
    }),
  );
  const figures: Record<string, number> = {};
  const errors: string[] = [];
  const started = await startNpmStart(dataDir, configPath);
  try {
    const endpoint = dataFolderHolder(dataDir)?.store;
    if (!endpoint) throw new Error('npm start recorded no store endpoint in its data folder');
    const now = Date.now();
    const seedStart = Date.now();
    log(`console: seeding ${shape.days} days of rollups (${shape.requestsPerMonth.toLocaleString('en-US')} requests a month, ${shape.people} people, ${shape.people + shape.automationKeys}+ keys, ${shape.groups} groups, ${shape.models} models, ${shape.upstreams} upstreams)`);
    const seeded = await seedRollups(localDynamo(endpoint), LOCAL_STATS_TABLE, shape, new Date(now), (text) => log(`console: ${text}`));
    const adminKey = await seedTheRest(endpoint, seeded.population, now);
    figures['console.seed.rows'] = seeded.rows.H + seeded.rows.D + seeded.rows.M;
    figures['console.seed.requests'] = seeded.requests;
    figures['console.seed.seconds'] = (Date.now() - seedStart) / 1000;
    log(`console: seeded ${figures['console.seed.rows'].toLocaleString('en-US')} rollup rows (hour ${seeded.rows.H}, day ${seeded.rows.D}, month ${seeded.rows.M}) for ${seeded.requests.toLocaleString('en-US')} requests in ${figures['console.seed.seconds'].toFixed(0)} s`);
    const lines: string[] = [];
    for (const call of consoleCalls(seeded.population, Date.now())) {
      const times: number[] = [];
      let bytes = 0;
      for (let i = 0; i < warmup + samples; i++) {
        const begin = performance.now();
        const answer = await fetch(`${started.url}${call.path}`, { headers: { authorization: `Bearer ${adminKey}`, 'accept-encoding': 'gzip' } });
        const body = await answer.arrayBuffer();
        const ms = performance.now() - begin;
        if (answer.status !== 200) {
          errors.push(`console ${call.id}: ${answer.status} ${Buffer.from(body).toString('utf8').slice(0, 300)}`);
          break;
        }
        bytes = body.byteLength;
        if (i >= warmup) times.push(ms);
      }
      if (times.length === 0) continue;
      const p50 = percentile(times, 50);
      const p95 = percentile(times, 95);
      Object.assign(figures, { [`console.${call.id}.p50`]: p50, [`console.${call.id}.p95`]: p95, [`console.${call.id}.bytes`]: bytes });
      lines.push(`| ${call.label.padEnd(34)} | ${p50.toFixed(1).padStart(8)} | ${p95.toFixed(1).padStart(8)} | ${String(Math.round(bytes / 1024)).padStart(7)} |`);
    }
    const table = [`Console API against npm start, ${samples} calls each after ${warmup} warm-up (ms; KB of JSON as decoded)`, `| ${'Call'.padEnd(34)} | ${'p50'.padStart(8)} | ${'p95'.padStart(8)} | ${'KB'.padStart(7)} |`, `|${'-'.repeat(36)}|${'-'.repeat(10)}|${'-'.repeat(10)}|${'-'.repeat(9)}|`, ...lines].join('\n');
    return { figures, table, errors };
  } finally {
    await stop(started.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
