import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CROSS_FORMAT_READY, type Client, type RouteSpec } from './routes.ts';

/**
 * The conformance table: every (client, route, scenario) cell is declared when the test files
 * load (with its reason when it is pending or not applicable); jest's JSON results then say
 * which of the run cells passed. `run.ts` joins the two into the table of docs/testing.md.
 */
export interface Scenario {
  id: string;
  label: string;
  /** A gateway-level behaviour (not about the upstream): run once, on the same-format route. */
  routeIndependent?: boolean;
  /** Why it cannot run on a route, by route id. */
  notApplicable?: Partial<Record<string, string>>;
  /**
   * A gateway bug this scenario hits on a route, by route id: the test still runs, as
   * `test.failing`, so the suite stays green while the table shows the failure and its reason,
   * and the test turns red once the bug is fixed (then delete the entry).
   */
  knownIssue?: Partial<Record<string, string>>;
  /** Shown under the table: what exactly a pass means, when not obvious from the label. */
  note?: string;
}

export interface CellDeclaration {
  client: Client;
  clientName: string;
  version: string;
  route: string;
  routeLabel: string;
  scenario: string;
  scenarioLabel: string;
  scenarioNote: string | undefined;
  /** ancestor titles and title, joined with ' › ' (how jest's JSON names the test). */
  testName: string;
  declared: 'run' | 'known-issue' | 'pending' | 'n/a' | 'elsewhere';
  reason: string | undefined;
}

export const PENDING_TRANSLATION = 'translation not landed: cross-format cells stay off until lambda/translate/ is wired (the gateway answered them 501); switch them on with CROSS_FORMAT_READY in test/clients/routes.ts';

export function resultsDir(): string {
  const dir = process.env.CLIENTS_RESULTS_DIR ?? join(tmpdir(), 'gateway-clients-results');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Declares cells and creates their jest tests. */
export class CellBook {
  readonly client: Client;
  readonly clientName: string;
  readonly version: string;
  readonly title: string;
  private readonly file: string;

  constructor(client: Client, clientName: string, version: string) {
    this.client = client;
    this.clientName = clientName;
    this.version = version;
    this.title = `${clientName} ${version}`;
    this.file = join(resultsDir(), `cells-${client}.jsonl`);
  }

  /**
   * One cell: a jest test when it can run, a skipped test (with its reason recorded) when it is
   * pending or not applicable. Must be called inside `describe(title) > describe(route.id)`.
   */
  cell(route: RouteSpec, scenario: Scenario, primaryRoute: string, fn: () => Promise<void>, timeoutMs: number): void {
    const testName = [this.title, route.id, scenario.label].join(' › ');
    let declared: CellDeclaration['declared'] = 'run';
    let reason: string | undefined;
    if (scenario.routeIndependent && route.id !== primaryRoute) {
      declared = 'elsewhere';
      reason = 'gateway-level behaviour, run once on the same-format route';
    } else if (scenario.notApplicable?.[route.id] !== undefined) {
      declared = 'n/a';
      reason = scenario.notApplicable[route.id];
    } else if (route.crossFormat && !CROSS_FORMAT_READY) {
      declared = 'pending';
      reason = PENDING_TRANSLATION;
    } else if (scenario.knownIssue?.[route.id] !== undefined) {
      declared = 'known-issue';
      reason = scenario.knownIssue[route.id];
    }
    const declaration: CellDeclaration = {
      client: this.client,
      clientName: this.clientName,
      version: this.version,
      route: route.id,
      routeLabel: route.label,
      scenario: scenario.id,
      scenarioLabel: scenario.label,
      scenarioNote: scenario.note,
      testName,
      declared,
      reason,
    };
    appendFileSync(this.file, `${JSON.stringify(declaration)}\n`);
    if (declared === 'elsewhere') return;
    if (declared === 'run') test(scenario.label, fn, timeoutMs);
    // CLIENTS_STRICT=1 runs known issues as plain tests, to see how exactly they fail.
    else if (declared === 'known-issue') (process.env.CLIENTS_STRICT === '1' ? test : test.failing)(scenario.label, fn, timeoutMs);
    else test.skip(`${scenario.label} [${declared}: ${reason}]`, () => undefined);
  }
}

// ------------------------------------------------------------------------------ the table

interface JestAssertion {
  ancestorTitles: string[];
  title: string;
  status: string;
  duration?: number | null;
  failureMessages: string[];
}

interface JestResults {
  testResults: { assertionResults: JestAssertion[]; message?: string; name: string }[];
  startTime: number;
}

export interface CellResult extends CellDeclaration {
  status: 'pass' | 'fail' | 'known-issue' | 'pending' | 'n/a' | 'elsewhere';
  detail: string | undefined;
  durationMs: number | undefined;
}

/** What a cross-format route answers today, recorded while the switch is off (see renderTable). */
export interface Probe {
  client: Client;
  route: string;
  model: string;
  status: number;
}

export function recordProbe(probe: Probe): void {
  appendFileSync(join(resultsDir(), 'probes.jsonl'), `${JSON.stringify(probe)}\n`);
}

export function readProbes(dir: string): Probe[] {
  const file = join(dir, 'probes.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as Probe);
}

export function readCells(dir: string): CellDeclaration[] {
  const cells: CellDeclaration[] = [];
  for (const client of ['claude-code', 'codex']) {
    const file = join(dir, `cells-${client}.jsonl`);
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) if (line.trim()) cells.push(JSON.parse(line) as CellDeclaration);
  }
  // A test file may be loaded more than once (jest workers): keep the first of each.
  const seen = new Set<string>();
  return cells.filter((cell) => !seen.has(cell.testName) && seen.add(cell.testName));
}

export function joinResults(cells: CellDeclaration[], jest: JestResults | undefined): CellResult[] {
  const byName = new Map<string, JestAssertion>();
  for (const file of jest?.testResults ?? []) for (const assertion of file.assertionResults) byName.set([...assertion.ancestorTitles, assertion.title].join(' › '), assertion);
  return cells.map((cell) => {
    if (cell.declared !== 'run' && cell.declared !== 'known-issue') return { ...cell, status: cell.declared, detail: cell.reason, durationMs: undefined };
    const assertion = byName.get(cell.testName);
    if (!assertion) return { ...cell, status: 'fail', detail: 'no result (the test file failed to run, or the run was filtered)', durationMs: undefined };
    if (cell.declared === 'known-issue') {
      // test.failing: jest reports "passed" when the scenario failed as expected.
      if (assertion.status === 'passed') return { ...cell, status: 'known-issue', detail: cell.reason, durationMs: undefined };
      if (assertion.status === 'failed') return { ...cell, status: 'fail', detail: `marked as a known issue but the scenario passed: the bug seems fixed, remove its knownIssue entry (${cell.reason})`, durationMs: undefined };
    }
    if (assertion.status === 'passed') return { ...cell, status: 'pass', detail: undefined, durationMs: assertion.duration ?? undefined };
    if (assertion.status === 'pending' || assertion.status === 'skipped' || assertion.status === 'todo') return { ...cell, status: 'fail', detail: 'not run (filtered out)', durationMs: undefined };
    return { ...cell, status: 'fail', detail: firstLine(assertion.failureMessages.join('\n')), durationMs: assertion.duration ?? undefined };
  });
}

function firstLine(message: string): string {
  // jest's failure text starts with the assertion; keep its first meaningful lines, without colours.
  const plain = message.replace(/\x1b\[[0-9;]*m/g, '');
  const lines = plain
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0 && !line.startsWith('at '));
  return lines.slice(0, 3).join(' ').slice(0, 300);
}

const MARK = { pass: 'pass', fail: '**FAIL**', 'known-issue': '**FAIL** (known gateway issue)', pending: 'pending', 'n/a': 'n/a', elsewhere: '—' } as const;

/** Markdown: one table per client (scenario rows, route columns), reasons as numbered notes. */
export function renderTable(results: CellResult[], meta: { date: string; seconds: number | undefined; probes?: Probe[]; dnsLookups?: string[]; cellTimes?: boolean }): string {
  const out: string[] = [];
  const notes: string[] = [];
  const noteNumber = (text: string) => {
    const index = notes.indexOf(text);
    if (index >= 0) return index + 1;
    notes.push(text);
    return notes.length;
  };
  const counts = { pass: 0, fail: 0, 'known-issue': 0, pending: 0, 'n/a': 0 };
  for (const result of results) if (result.status !== 'elsewhere') counts[result.status]++;
  const seconds = meta.seconds === undefined ? '' : `, suite time ${Math.round(meta.seconds)} s`;
  out.push(`Generated by \`npm run conformance\` on ${meta.date}: ${counts.pass} pass, ${counts.fail} fail, ${counts['known-issue']} known gateway issue(s), ${counts.pending} pending, ${counts['n/a']} not applicable${seconds}. Cross-format cells: ${CROSS_FORMAT_READY ? 'on' : 'off'} (\`CROSS_FORMAT_READY\`).`);
  if (meta.dnsLookups !== undefined) {
    const lookups = meta.dnsLookups.length === 0 ? 'none' : meta.dnsLookups.map((name) => `\`${name}\` (${EXPECTED_LOOKUPS[name] ?? '**unexpected**'})`).join('; ');
    out.push('', `Names looked up inside the namespace during the run (phone-home attempts, all answered NXDOMAIN; nothing can leave loopback): ${lookups}.`);
  }
  const answered = (meta.probes ?? []).filter((probe) => probe.status !== 501);
  if (!CROSS_FORMAT_READY && answered.length > 0) {
    out.push('', `Note: with the switch off, a probe request on ${answered.map((probe) => `${probe.model} (${probe.status})`).join(', ')} was not answered 501: translation may be wired; try \`CROSS_FORMAT_READY=1 npm run test:clients\`.`);
  }
  for (const client of ['claude-code', 'codex'] as const) {
    const rows = results.filter((result) => result.client === client);
    if (rows.length === 0) continue;
    const routes = [...new Map(rows.map((row) => [row.route, row.routeLabel])).entries()];
    const scenarios = [...new Map(rows.map((row) => [row.scenario, row])).values()];
    out.push('', `**${rows[0]?.clientName} ${rows[0]?.version}**`, '');
    out.push(`| Scenario | ${routes.map(([, label]) => label).join(' | ')} |`);
    out.push(`|---|${routes.map(() => '---').join('|')}|`);
    for (const scenario of scenarios) {
      const label = scenario.scenarioNote ? `${scenario.scenarioLabel} (${noteNumber(scenario.scenarioNote)})` : scenario.scenarioLabel;
      const cells = routes.map(([route]) => {
        const cell = rows.find((row) => row.route === route && row.scenario === scenario.scenario);
        if (!cell) return '';
        const time = meta.cellTimes && cell.status === 'pass' && cell.durationMs !== undefined ? ` ${(cell.durationMs / 1000).toFixed(1)} s` : '';
        const why = cell.detail && cell.status !== 'elsewhere' ? ` (${noteNumber(cell.detail)})` : '';
        return `${MARK[cell.status]}${time}${why}`;
      });
      out.push(`| ${label} | ${cells.join(' | ')} |`);
    }
  }
  out.push('', '— = gateway-level scenario, run once on the same-format route.', '');
  notes.forEach((note, index) => out.push(`${index + 1}. ${note.replace(/\|/g, '\\|').replace(/\n/g, ' ')}`));
  return out.join('\n');
}

/**
 * DNS lookups the suite expects (see dns-watch.ts), with where they come from. Anything else
 * fails the run: a client update has started calling somewhere new.
 */
export const EXPECTED_LOOKUPS: Record<string, string> = {
  'api.anthropic.com': 'Claude Code, in the model-discovery runs only, which must allow nonessential traffic',
  'content-autofill.googleapis.com': 'Chromium (the sign-in cells\' browser) at start: its autofill service, which no flag of Debian\'s build switches off',
  'update.googleapis.com': 'Chromium (the sign-in cells\' browser) at start: its update check, despite --disable-component-update',
  'raw.githubusercontent.com': 'the Codex TUI fetching its announcement tip at start, which no setting switches off',
};

export const BEGIN = '<!-- conformance:begin (generated by npm run conformance; do not edit by hand) -->';
export const END = '<!-- conformance:end -->';

/** Where `npm run conformance` writes the table, between the markers. */
export const TABLE_DOC = 'docs/testing.md';

/** Replaces the document's text between the markers; refuses when they are missing. */
export function writeConformanceTable(docPath: string, table: string): void {
  const doc = readFileSync(docPath, 'utf8');
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`${docPath} has no conformance markers (${BEGIN} ... ${END})`);
  writeFileSync(docPath, `${doc.slice(0, begin + BEGIN.length)}\n${table}\n${doc.slice(end)}`);
}
