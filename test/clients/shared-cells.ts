import { until } from '../support/processes.ts';
import { recordProbe, type CellBook, type Scenario } from './conformance.ts';
import type { ClientsEnvironment } from './environment.ts';
import { clientRequests, expectUpstreamCredentials, logsFor, reasoningItems, stubOf, tapPosts } from './observe.ts';
import { CROSS_FORMAT_READY, type Client, type FALLBACK_ROUTES, type RouteId, type RouteSpec } from './routes.ts';
import type { SharedRows } from './scenarios.ts';
import type { ScriptedUpstream } from './upstream/scripted-upstream.ts';
import type { Json, WireFormat } from './upstream/wire.ts';

/**
 * What both client suites do alike: the table's frame (one describe per route), the cells whose
 * scripted upstream and gateway-side checks are the same for both CLIs (upstream failures,
 * fallbacks, the reasoning round trip, a plain turn's upstream side), and the cross-format probe.
 * What differs (how a turn runs, what a client gets of a failure) comes from its ClientDriver.
 */

/** One CLI run's limit: a hang is killed then and fails its cell, not the suite. */
export const RUN_TIMEOUT_MS = 60_000;
/** How the suite waits for the gateway's log lines and files: every 25 ms for 5 s, a CLI beside it needing the CPU. */
export const POLL = { everyMs: 25 };
/** Per cell: room for two CLI runs. */
const TEST_TIMEOUT_MS = 150_000;

/** A finished turn: the client's last answer, and what it printed on the way. */
export interface Turn {
  answer: string | undefined;
  stdout: string;
}

export type Cell = (scenario: Scenario, fn: () => Promise<void>) => void;

/** A stream that failed: what its end must match as the client got it, and how the client's retry shows. */
interface Recovery {
  ended: (RegExp | string)[];
  retried(turn: Turn, stub: ScriptedUpstream, route: RouteSpec): void;
}

/** What a client gets of each scripted upstream failure, and how it recovers. */
export interface FailureViews {
  /** The status the client is answered while the upstream is overloaded. */
  overloadedStatus: number;
  /** The error body relayed with a 429 or an overload, when the client's format types it. */
  errorBody?: (type: 'rate_limit_error' | 'overloaded_error') => Json;
  /** The connection dropped mid-stream (and the answer the client then gets). */
  dropped: Recovery & { answer: string };
  /** The upstream failed inside its stream. */
  failedInStream: Recovery;
}

export interface ClientDriver {
  client: Client;
  book: CellBook;
  /** The same-format route, where the route-independent cells run. */
  primary: RouteId;
  routes: RouteSpec[];
  fallback: (typeof FALLBACK_ROUTES)[keyof typeof FALLBACK_ROUTES];
  /** Where the client posts its turns, and in which format. */
  path: string;
  format: WireFormat;
  /** The suite's environment (started in beforeAll, so read it when a cell runs). */
  readonly env: ClientsEnvironment;
  /** One "Say hi" turn (on `model` when given, else the route's) that must succeed. */
  sayHi(route: RouteSpec, model?: string): Promise<Turn>;
  /** Two turns on `model`, the second continuing the first's session; both must succeed. */
  twoTurns(route: RouteSpec, model: string): Promise<[string | undefined, string | undefined]>;
  /** Finds the simulator's reasoning token (signature or encrypted_content) in its first answer. */
  simulatorReasoning: RegExp;
  /** A minimal request for `model`, for the cross-format probe. */
  probeBody(model: string): Json;
  sees: FailureViews;
}

/** `describe(client) > describe(route)`: the client's own cells, then the shared ones; then the probe. */
export function describeClient(driver: ClientDriver, rows: SharedRows, ownCells: (route: RouteSpec, cell: Cell) => void): void {
  describe(driver.book.title, () => {
    for (const route of driver.routes) {
      describe(route.id, () => {
        const cell: Cell = (scenario, fn) => driver.book.cell(route, scenario, driver.primary, fn, TEST_TIMEOUT_MS);
        ownCells(route, cell);
        failureCells(driver, route, rows, cell);
      });
    }

    // While the switch is off, record what the cross-format routes answer today (the table says
    // so when it is no longer 501, i.e. translation seems wired and the switch can be tried).
    test('probe: what cross-format routes answer with the switch off', async () => {
      if (CROSS_FORMAT_READY) return;
      for (const route of driver.routes.filter((candidate) => candidate.crossFormat)) {
        const response = await fetch(`${driver.env.tap.url}${driver.path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${driver.env.issued.key}`, 'content-type': 'application/json' },
          body: JSON.stringify(driver.probeBody(route.model)),
        });
        await response.arrayBuffer();
        recordProbe({ client: driver.client, route: route.id, model: route.model, status: response.status });
      }
    });
  });
}

/** The rows every table ends with: fallbacks, then the upstream failing in each way. */
function failureCells(driver: ClientDriver, route: RouteSpec, rows: SharedRows, cell: Cell): void {
  const { sees } = driver;

  cell(rows.fallback529, () => primaryFails(driver, 529));

  cell(rows.fallback429, () => primaryFails(driver, 429));

  cell(rows.retry429, async () => {
    const stub = stubOf(driver.env, route)!;
    stub.script({ error: { status: 429, retryAfter: 1, message: 'stub rate limit' } }, { text: 'Recovered after a 429.' });
    expect((await driver.sayHi(route)).answer).toBe('Recovered after a 429.');
    const creates = stub.creates();
    expect(creates).toHaveLength(2);
    expect(creates[1]!.at - creates[0]!.at).toBeGreaterThanOrEqual(900);
    const posts = tapPosts(driver.env, driver.path);
    expect(posts.map((exchange) => exchange.status)).toEqual([429, 200]);
    expect(posts[0]?.responseHeaders['retry-after']).toBe('1');
    if (sees.errorBody) expect(JSON.parse(posts[0]!.response)).toMatchObject(sees.errorBody('rate_limit_error'));
  });

  cell(rows.overloaded, async () => {
    const stub = stubOf(driver.env, route)!;
    stub.script({ error: { status: stub.format === 'messages' ? 529 : 503, message: 'stub overloaded' } }, { text: 'Recovered after an overload.' });
    expect((await driver.sayHi(route)).answer).toBe('Recovered after an overload.');
    expect(stub.creates()).toHaveLength(2);
    const posts = tapPosts(driver.env, driver.path);
    expect(posts.map((exchange) => exchange.status)).toEqual([sees.overloadedStatus, 200]);
    if (sees.errorBody) expect(JSON.parse(posts[0]!.response)).toMatchObject(sees.errorBody('overloaded_error'));
  });

  cell(rows.midstream, () => recovers(driver, route, { breakMidStream: true }, sees.dropped.answer, sees.dropped, 'upstream_failed'));

  cell(rows.streamError, () => recovers(driver, route, { streamError: true }, 'Recovered after a failed stream.', sees.failedInStream, 'upstream_error'));
}

/**
 * The first answer's stream fails (`failure`), the client retries and gets `answer`: the first
 * stream reached it as a 200 ending as `recovery` says, and the gateway logged both tries.
 */
async function recovers(driver: ClientDriver, route: RouteSpec, failure: { breakMidStream?: true; streamError?: true }, answer: string, recovery: Recovery, outcome: string): Promise<void> {
  const stub = stubOf(driver.env, route)!;
  stub.script(failure, { text: answer });
  const turn = await driver.sayHi(route);
  expect(turn.answer).toBe(answer);
  recovery.retried(turn, stub, route);
  const posts = tapPosts(driver.env, driver.path);
  expect(posts[0]?.status).toBe(200);
  for (const pattern of recovery.ended) expect(posts[0]?.response).toMatch(pattern);
  await until(() => logsFor(driver.env, route.model).length >= 2, 'two log lines of the turn', POLL);
  expect(logsFor(driver.env, route.model).map((line) => line.outcome).slice(-2)).toEqual([outcome, 'ok']);
}

/** A turn on the fallback route whose primary answers `status`: the fallback must serve it, unseen. */
async function primaryFails(driver: ClientDriver, status: number): Promise<void> {
  const { env, fallback: route } = driver;
  env.stubs[route.primary].script({ error: { status, retryAfter: 30, message: `primary ${status}` } });
  env.stubs[route.fallback].script({ text: 'Served by the fallback.' });
  expect((await driver.sayHi(driver.routes[0]!, route.model)).answer).toBe('Served by the fallback.');
  const posts = tapPosts(env, driver.path);
  expect(posts.map((exchange) => exchange.status)).toEqual([200]);
  expect(posts[0]?.responseHeaders['x-gateway-upstream']).toBe(route.fallback);
  expect(env.stubs[route.primary].creates().map((exchange) => exchange.status)).toEqual([status]);
  await until(() => logsFor(env, route.model).length > 0, 'the turn\'s log line', POLL);
  expect(logsFor(env, route.model)[0]).toMatchObject({ status: 200, upstream: route.fallback, attempts: [{ upstream: route.primary, status }, { upstream: route.fallback, model: route.fallbackModel, status: 200 }] });
}

/**
 * A plain "Say hi" turn that printed `answer`: on a stub route, one streamed create for the
 * route's upstream model, with the upstream's own credential; on the simulator, its greeting.
 * Either way one log line, ok.
 */
export async function expectPlainTurn(driver: ClientDriver, route: RouteSpec, answer: string | undefined, simulatorGreeting: string): Promise<void> {
  const stub = stubOf(driver.env, route);
  if (stub) {
    expect(answer).toBe(`Hello from the ${stub.format} stub.`);
    const creates = stub.creates();
    expect(creates).toHaveLength(1);
    expect(creates[0]?.request.stream).toBe(true);
    expect(creates[0]?.request.model).toBe(route.upstreamModel ?? route.model);
    expectUpstreamCredentials(driver.env, route);
  } else {
    expect(answer).toContain(simulatorGreeting);
  }
  await until(() => logsFor(driver.env, route.model).length > 0, 'the turn\'s log line', POLL);
  expect(logsFor(driver.env, route.model)[0]).toMatchObject({ route: driver.format, status: 200, outcome: 'ok', upstream: route.stub ?? 'sim', usage: expect.objectContaining({ outputTokens: expect.any(Number) }) });
}

/** Turn 1 answers with reasoning; turn 2, continuing the session, must send it back. */
export async function reasoningRoundTrip(driver: ClientDriver, route: RouteSpec, model: string, upstreamModel: string | undefined): Promise<void> {
  const stub = stubOf(driver.env, route);
  stub?.script({ thinking: true, text: 'First answer.' }, { text: 'Second answer.' });
  const answers = await driver.twoTurns(route, model);
  if (stub) {
    expect(answers).toEqual(['First answer.', 'Second answer.']);
    const creates = stub.creates();
    expect(creates.map((exchange) => exchange.request.model)).toEqual([upstreamModel ?? model, upstreamModel ?? model]);
    const sent = creates[0]?.answer?.thinking;
    if (stub.format === 'chat') {
      // Chat Completions has no signature and no standard way back for reasoning: what must hold is
      // that the client got it (a thinking block, a reasoning item) and that sending it back to the gateway works.
      const [, again] = clientRequests(driver.env, driver.format, driver.path);
      expect(reasoningItems(again!)).toEqual([expect.objectContaining({ text: sent?.text })]);
    } else expect(reasoningItems(creates[1]!.request)).toEqual([expect.objectContaining({ text: sent?.text, signature: sent?.signature })]);
  } else {
    const requests = clientRequests(driver.env, driver.format, driver.path);
    expect(requests).toHaveLength(2);
    const signature = driver.simulatorReasoning.exec(requests[0]!.exchange.response)?.[1];
    expect(signature).toBeDefined();
    expect(reasoningItems(requests[1]!)).toEqual([expect.objectContaining({ signature })]);
  }
}
