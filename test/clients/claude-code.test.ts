import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLAUDE, claudeEnv, runClaude, type ClaudeResult } from './clis.ts';
import { CellBook, recordProbe, type Scenario } from './conformance.ts';
import { startEnvironment, type ClientsEnvironment, type IssuedKey } from './environment.ts';
import { assertIsolated } from './isolation.ts';
import { clientRequests, describeRun, expectBedrockRewrite, expectUpstreamCredentials, logsFor, reasoningItems, stubOf, tapPosts, toolCalls, toolResults, until } from './observe.ts';
import { CLAUDE_ROUTES, CROSS_FORMAT_READY, FALLBACK_ROUTES, listedClaudeModels, type RouteSpec } from './routes.ts';
import { CLAUDE_SCENARIOS as S } from './scenarios.ts';

/**
 * Claude Code (the real native CLI, `-p` mode) through the gateway on every route. Upstream
 * answers are scripted per scenario; assertions look at what the CLI printed, what the upstream
 * received (stub routes) or what the CLI sent (the tap, for the in-process simulator), and the
 * gateway's log line.
 */
const book = new CellBook('claude-code', CLAUDE.name, CLAUDE.version);
const PRIMARY = 'anthropic';
const RUN_TIMEOUT_MS = 60_000;
const TEST_TIMEOUT_MS = 150_000;
const MESSAGES = '/first/v1/messages';
const COUNT_TOKENS = '/first/v1/messages/count_tokens';

let env: ClientsEnvironment;

beforeAll(async () => {
  assertIsolated();
  env = await startEnvironment('claude');
}, 90_000);

afterAll(async () => {
  await env?.close();
});

beforeEach(() => env.reset());

interface ClaudeOptions {
  model?: string;
  home?: string;
  cwd?: string;
  extraEnv?: Record<string, string | undefined>;
  issued?: IssuedKey;
}

/** `claude <args>` with the printed setup (`setup.claudeCode.env`) and the route's model names. */
function claude(route: RouteSpec, args: string[], options: ClaudeOptions = {}): Promise<ClaudeResult> {
  const issued = options.issued ?? env.issued;
  const home = options.home ?? env.dir('claude-home');
  const extra: Record<string, string | undefined> = { ANTHROPIC_MODEL: options.model ?? route.model, ...options.extraEnv };
  if (route.smallModel) extra.ANTHROPIC_DEFAULT_HAIKU_MODEL = route.smallModel;
  return runClaude(args, { env: claudeEnv(issued.setup.claudeCode.env, home, extra), cwd: options.cwd ?? env.dir('claude-work'), timeoutMs: RUN_TIMEOUT_MS });
}

let revokedRun: Promise<ClaudeResult> | undefined;
/** What the tap saw during that run. */
let authExchanges: typeof env.tap.exchanges = [];

/** One run with a revoked key, shared by the two 401 cells. */
function runWithRevokedKey(route: RouteSpec): Promise<ClaudeResult> {
  revokedRun ??= (async () => {
    const revoked = await env.createKey('conformance-revoked');
    await env.revokeKey(revoked.id);
    env.reset();
    const run = await claude(route, ['-p', 'Say hi', '--output-format', 'json'], { issued: revoked });
    authExchanges = [...env.tap.exchanges];
    return run;
  })();
  return revokedRun;
}

/** Turn 1 answers with thinking; turn 2 (`--continue`, same HOME and folder) must send it back. */
async function thinkingTwoTurns(route: RouteSpec, model: string, upstreamModel: string | undefined): Promise<void> {
  const stub = stubOf(env, route);
  stub?.script({ thinking: true, text: 'First answer.' }, { text: 'Second answer.' });
  const home = env.dir('claude-home');
  const cwd = env.dir('claude-work');
  const first = expectSuccess(await claude(route, ['-p', 'Think, then answer', '--output-format', 'json'], { model, home, cwd }));
  const second = expectSuccess(await claude(route, ['-p', 'And a second turn', '--continue', '--output-format', 'json'], { model, home, cwd }));
  expect(second.session_id).toBe(first.session_id);
  if (stub) {
    expect([first.result, second.result]).toEqual(['First answer.', 'Second answer.']);
    const creates = stub.creates();
    expect(creates.map((exchange) => exchange.request.model)).toEqual([upstreamModel ?? model, upstreamModel ?? model]);
    const sent = creates[0]?.answer?.thinking;
    if (stub.format === 'chat') {
      // Chat Completions has no signature and no standard way back for reasoning: what must hold is
      // that the client got it as a thinking block and that sending it back to the gateway works.
      const [, again] = clientRequests(env, 'messages', MESSAGES);
      expect(reasoningItems(again!)).toEqual([expect.objectContaining({ text: sent?.text })]);
    } else expect(reasoningItems(creates[1]!.request)).toEqual([expect.objectContaining({ text: sent?.text, signature: sent?.signature })]);
  } else {
    const requests = clientRequests(env, 'messages', MESSAGES);
    expect(requests).toHaveLength(2);
    const signature = /"signature":"(sim_[A-Za-z0-9_-]+)"/.exec(requests[0]!.exchange.response)?.[1];
    expect(signature).toBeDefined();
    expect(reasoningItems(requests[1]!)).toEqual([expect.objectContaining({ signature })]);
  }
}

/** A turn on the fallback route whose primary answers `status`: the fallback must serve it, unseen. */
async function primaryFails(status: number): Promise<void> {
  const route = FALLBACK_ROUTES.claude;
  env.stubs[route.primary].script({ error: { status, retryAfter: 30, message: `primary ${status}` } });
  env.stubs[route.fallback].script({ text: 'Served by the fallback.' });
  const result = expectSuccess(await claude(CLAUDE_ROUTES[0] as RouteSpec, ['-p', 'Say hi', '--output-format', 'json'], { model: route.model }));
  expect(result.result).toBe('Served by the fallback.');
  const posts = tapPosts(env, MESSAGES);
  expect(posts.map((exchange) => exchange.status)).toEqual([200]);
  expect(posts[0]?.responseHeaders['x-gateway-upstream']).toBe(route.fallback);
  expect(env.stubs[route.primary].creates().map((exchange) => exchange.status)).toEqual([status]);
  await until(() => logsFor(env, route.model).length > 0);
  expect(logsFor(env, route.model)[0]).toMatchObject({ status: 200, upstream: route.fallback, attempts: [{ upstream: route.primary, status }, { upstream: route.fallback, model: route.fallbackModel, status: 200 }] });
}

/**
 * A fresh key that has spent `fraction` of a daily dollar budget: one request is metered (its
 * cost read from the gateway's log line), then the budget is set to make that the fraction.
 */
async function keyWithSpent(route: RouteSpec, fraction: number): Promise<IssuedKey> {
  const issued = await env.createKey(`budget-${fraction}`);
  const response = await fetch(`${env.tap.url}${MESSAGES}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${issued.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: route.model, max_tokens: 20, messages: [{ role: 'user', content: 'spend a little' }] }),
  });
  await response.text();
  const requestId = response.headers.get('request-id');
  await until(() => env.gatewayLogs().some((line) => line.requestId === requestId));
  const cost = env.gatewayLogs().find((line) => line.requestId === requestId)?.costUsd as number;
  // The budget in whole micro-dollars (the CLI takes 6 decimals), so the fraction spent is exact.
  const micro = Math.round(cost * 1e6);
  const budget = fraction === 1 ? micro : Math.round(micro / fraction);
  await env.updateKey(issued.id, ['--usd-per-day', (budget / 1e6).toFixed(6)]);
  env.reset();
  return issued;
}

function expectSuccess(run: ClaudeResult): NonNullable<ClaudeResult['result']> {
  if (run.code !== 0 || !run.result || run.result.is_error) throw new Error(`Claude Code did not succeed: ${describeRun(run)}`);
  return run.result;
}

describe(book.title, () => {
  for (const route of CLAUDE_ROUTES) {
    describe(route.id, () => {
      const cell = (scenario: Scenario, fn: () => Promise<void>) => book.cell(route, scenario, PRIMARY, fn, TEST_TIMEOUT_MS);

      cell(S.text, async () => {
        const run = await claude(route, ['-p', 'Say hi', '--output-format', 'json']);
        const result = expectSuccess(run);
        const stub = stubOf(env, route);
        const posts = tapPosts(env, MESSAGES);
        expect(posts).toHaveLength(1);
        expect(posts[0]?.responseHeaders['content-type']).toContain('text/event-stream');
        if (stub) {
          expect(result.result).toBe(`Hello from the ${stub.format} stub.`);
          const creates = stub.creates();
          expect(creates).toHaveLength(1);
          expect(creates[0]?.request.stream).toBe(true);
          expect(creates[0]?.request.model).toBe(route.upstreamModel ?? route.model);
          expectUpstreamCredentials(env, route);
          if (route.stub === 'bedrock') expectBedrockRewrite(posts[0]!, creates[0]!.body!);
        } else {
          expect(result.result).toContain('Hello from the gateway simulator');
        }
        await until(() => logsFor(env, route.model).length > 0);
        expect(logsFor(env, route.model)[0]).toMatchObject({ route: 'messages', status: 200, outcome: 'ok', upstream: route.stub ?? 'sim', usage: expect.objectContaining({ outputTokens: expect.any(Number) }) });
      });

      cell(S.tool, async () => {
        const stub = stubOf(env, route);
        stub?.script({ tool: { name: 'Bash', input: { command: 'echo hello-from-tool', description: 'Echo a test string' } } }, { text: 'The command printed hello-from-tool.' });
        const prompt = stub ? 'Run echo hello-from-tool' : 'Use the Bash tool.';
        const result = expectSuccess(await claude(route, ['-p', prompt, '--allowedTools', 'Bash', '--output-format', 'json']));
        if (stub) {
          const creates = stub.creates();
          expect(creates).toHaveLength(2);
          const call = creates[0]?.answer?.toolCall;
          expect(toolResults(creates[1]!.request)).toEqual([expect.objectContaining({ id: call?.id, output: expect.stringContaining('hello-from-tool'), isError: false })]);
          expect(result.result).toBe('The command printed hello-from-tool.');
          expectUpstreamCredentials(env, route);
        } else {
          // The simulator calls Bash with {"command":"simulated"}: a failing command, reported back all the same.
          const requests = clientRequests(env, 'messages', MESSAGES);
          expect(requests).toHaveLength(2);
          const id = /"id":"(toolu_[A-Za-z0-9]+)"/.exec(requests[0]!.exchange.response)?.[1];
          expect(id).toBeDefined();
          expect(toolCalls(requests[1]!)).toEqual([expect.objectContaining({ id, name: 'Bash', input: JSON.stringify({ command: 'simulated' }) })]);
          expect(toolResults(requests[1]!)).toEqual([expect.objectContaining({ id })]);
          expect(result.result).toContain('The tool returned');
        }
      });

      cell(S.thinking, () => thinkingTwoTurns(route, route.model, route.upstreamModel));

      cell(S.thinkingAlias, () => thinkingTwoTurns(route, route.alias!.model, route.alias!.upstreamModel));

      cell(S.countTokens, async () => {
        const run = await claude(route, ['-p', '/context']);
        if (run.code !== 0 || !run.stdout.includes('Context Usage')) throw new Error(`/context failed: ${describeRun(run)}`);
        const counts = tapPosts(env, COUNT_TOKENS);
        expect(counts.length).toBeGreaterThan(0);
        expect(counts.map((exchange) => exchange.status)).toEqual(counts.map(() => 200));
        // A failing count_tokens makes Claude Code fall back to billable max_tokens:1 messages calls.
        expect(tapPosts(env, MESSAGES)).toHaveLength(0);
        const stub = stubOf(env, route);
        if (route.stub === 'anthropic' || route.stub === 'bedrock') {
          const upstream = stub!.exchanges.filter((exchange) => exchange.operation === 'count_tokens');
          expect(upstream).toHaveLength(counts.length);
          expect(upstream.map((exchange) => exchange.request?.model)).toEqual(counts.map(() => route.upstreamModel ?? route.model));
        } else {
          expect(counts.map((exchange) => exchange.responseHeaders['x-token-count'])).toEqual(counts.map(() => 'estimated'));
          if (stub) expect(stub.exchanges).toHaveLength(0);
        }
      });

      cell(S.subagent, async () => {
        const stub = stubOf(env, route)!;
        stub.script(
          { when: (request) => request.model === (route.upstreamModel ?? route.model), tool: { name: 'Agent', input: { description: 'Explore test', prompt: 'List the files here', subagent_type: 'Explore', model: 'haiku', run_in_background: false } } },
          { when: (request) => request.model === (route.smallUpstreamModel ?? route.smallModel), text: 'Explored: nothing here.' },
          { when: (request) => request.model === (route.upstreamModel ?? route.model), text: 'The explorer found nothing.' },
        );
        const result = expectSuccess(await claude(route, ['-p', 'Explore this folder', '--output-format', 'json']));
        expect(result.result).toBe('The explorer found nothing.');
        const creates = stub.creates();
        expect(creates.map((exchange) => exchange.request.model)).toEqual([route.upstreamModel ?? route.model, route.smallUpstreamModel ?? route.smallModel, route.upstreamModel ?? route.model]);
        expect(toolResults(creates[2]!.request)).toEqual([expect.objectContaining({ id: creates[0]?.answer?.toolCall?.id, output: expect.stringContaining('Explored: nothing here.') })]);
        const subagentCall = tapPosts(env, MESSAGES).find((exchange) => exchange.headers['x-claude-code-agent-id'] !== undefined);
        expect(JSON.parse(subagentCall?.body ?? '{}').model).toBe(route.smallModel);
        await until(() => logsFor(env, route.smallModel!).length > 0);
        const line = logsFor(env, route.smallModel!);
        expect(line).toEqual([expect.objectContaining({ status: 200, upstream: route.stub })]);
        expect(line[0]?.upstreamModel).toBe(route.smallUpstreamModel);
      });

      cell(S.discovery, async () => {
        const home = env.dir('claude-home');
        const result = expectSuccess(
          await claude(route, ['-p', 'Say hi', '--output-format', 'json'], {
            home,
            extraEnv: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: undefined, CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY: '1' },
          }),
        );
        expect(result.result).toBe('Hello from the messages stub.');
        const lists = env.tap.exchanges.filter((exchange) => exchange.method === 'GET' && exchange.url.split('?')[0] === '/first/v1/models');
        expect(lists).toEqual([expect.objectContaining({ status: 200 })]);
        expect(lists[0]?.headers.authorization).toBe(`Bearer ${env.issued.key}`);
        const cache = join(home, '.claude', 'cache', 'gateway-models.json');
        await until(() => existsSync(cache));
        // {"baseUrl","fetchedAt","models":[{"id","display_name"}]}: only claude*/anthropic* ids are kept.
        const cached = JSON.parse(readFileSync(cache, 'utf8')) as { baseUrl?: string; models?: { id: string }[] };
        expect(cached.baseUrl).toBe(env.issued.setup.claudeCode.env.ANTHROPIC_BASE_URL);
        expect(new Set(cached.models?.map((model) => model.id))).toEqual(new Set(listedClaudeModels()));
      });

      cell(S.auth, async () => {
        const run = await runWithRevokedKey(route);
        expect(run.timedOut).toBe(false);
        expect(run.code).toBe(1);
        expect(run.durationMs).toBeLessThan(15_000);
        expect(run.result).toMatchObject({ is_error: true, api_error_status: 401 });
        const posts = authExchanges.filter((exchange) => exchange.method === 'POST');
        expect(posts.map((exchange) => [exchange.url.split('?')[0], exchange.status])).toEqual([[MESSAGES, 401]]);
        expect(posts[0]?.responseHeaders['x-should-retry']).toBe('false');
        expect(JSON.parse(posts[0]!.response)).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
        expect(stubOf(env, route)!.exchanges).toHaveLength(0);
      });

      cell(S.authMessage, async () => {
        const run = await runWithRevokedKey(route);
        const message = (JSON.parse(authExchanges.find((exchange) => exchange.status === 401)?.response ?? '{}') as { error?: { message?: string } }).error?.message;
        expect(run.result?.result).toBe(`Failed to authenticate. API Error: 401 ${message}`);
      });

      cell(S.budgetWarning, async () => {
        const run = await claude(route, ['-p', 'Say hi', '--output-format', 'stream-json', '--verbose'], { issued: await keyWithSpent(route, 0.8) });
        expect(run.code).toBe(0);
        const events = run.stdout.split('\n').filter((line) => line.includes('"type":"rate_limit_event"')).map((line) => JSON.parse(line) as { rate_limit_info: Record<string, unknown> });
        const midnight = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1) / 1000;
        expect(events[0]?.rate_limit_info).toMatchObject({ status: 'allowed_warning', rateLimitType: 'overage', utilization: 0.8, surpassedThreshold: 0.75, resetsAt: midnight });
        const posts = tapPosts(env, MESSAGES);
        expect(posts[0]?.responseHeaders).toMatchObject({ 'anthropic-ratelimit-unified-status': 'allowed_warning', 'anthropic-ratelimit-unified-overage-utilization': '0.8' });
      });

      cell(S.budgetSpent, async () => {
        const issued = await keyWithSpent(route, 1);
        const before = stubOf(env, route)?.exchanges.length ?? 0;
        const run = await claude(route, ['-p', 'Say hi', '--output-format', 'json'], { issued });
        expect(run.timedOut).toBe(false);
        expect(run.result).toMatchObject({ is_error: true, api_error_status: 429 });
        expect(run.result?.result).toContain('budget for the day');
        const posts = tapPosts(env, MESSAGES);
        expect(posts.map((exchange) => exchange.status)).toEqual([429]);
        expect(posts[0]?.responseHeaders).toMatchObject({ 'x-should-retry': 'false', 'anthropic-ratelimit-unified-status': 'rejected' });
        expect(JSON.parse(posts[0]!.response)).toMatchObject({ type: 'error', error: { type: 'billing_error' } });
        expect(stubOf(env, route)?.exchanges.length ?? 0).toBe(before);
      });

      cell(S.fallback529, () => primaryFails(529));

      cell(S.fallback429, () => primaryFails(429));

      cell(S.retry429, async () => {
        const stub = stubOf(env, route)!;
        stub.script({ error: { status: 429, retryAfter: 1, message: 'stub rate limit' } }, { text: 'Recovered after a 429.' });
        const result = expectSuccess(await claude(route, ['-p', 'Say hi', '--output-format', 'json']));
        expect(result.result).toBe('Recovered after a 429.');
        const creates = stub.creates();
        expect(creates).toHaveLength(2);
        expect(creates[1]!.at - creates[0]!.at).toBeGreaterThanOrEqual(900);
        const posts = tapPosts(env, MESSAGES);
        expect(posts.map((exchange) => exchange.status)).toEqual([429, 200]);
        expect(posts[0]?.responseHeaders['retry-after']).toBe('1');
        expect(JSON.parse(posts[0]!.response)).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
      });

      cell(S.overloaded, async () => {
        const stub = stubOf(env, route)!;
        stub.script({ error: { status: stub.format === 'messages' ? 529 : 503, message: 'stub overloaded' } }, { text: 'Recovered after an overload.' });
        const result = expectSuccess(await claude(route, ['-p', 'Say hi', '--output-format', 'json']));
        expect(result.result).toBe('Recovered after an overload.');
        expect(stub.creates()).toHaveLength(2);
        const posts = tapPosts(env, MESSAGES);
        expect(posts.map((exchange) => exchange.status)).toEqual([529, 200]);
        expect(JSON.parse(posts[0]!.response)).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
      });

      cell(S.midstream, async () => {
        const stub = stubOf(env, route)!;
        stub.script({ breakMidStream: true }, { text: 'Recovered without streaming.' });
        const result = expectSuccess(await claude(route, ['-p', 'Say hi', '--output-format', 'json']));
        expect(result.result).toBe('Recovered without streaming.');
        // Claude Code's fallback is a non-streaming request (a translator may still stream upstream).
        expect(clientRequests(env, 'messages', MESSAGES).map((request) => request.stream)).toEqual([true, false]);
        const creates = stub.creates();
        expect(creates).toHaveLength(2);
        if (!route.crossFormat) expect(creates.map((exchange) => exchange.request.stream)).toEqual([true, false]);
        const posts = tapPosts(env, MESSAGES);
        expect(posts[0]?.status).toBe(200);
        expect(posts[0]?.response).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error"/);
        await until(() => logsFor(env, route.model).length >= 2);
        expect(logsFor(env, route.model).map((line) => line.outcome).slice(-2)).toEqual(['upstream_failed', 'ok']);
      });

      cell(S.streamError, async () => {
        const stub = stubOf(env, route)!;
        stub.script({ streamError: true }, { text: 'Recovered after a failed stream.' });
        const result = expectSuccess(await claude(route, ['-p', 'Say hi', '--output-format', 'json']));
        expect(result.result).toBe('Recovered after a failed stream.');
        expect(stub.creates()).toHaveLength(2);
        const posts = tapPosts(env, MESSAGES);
        expect(posts[0]?.status).toBe(200);
        expect(posts[0]?.response).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"(overloaded_error|api_error)","message":"stub failure inside the stream"/);
        await until(() => logsFor(env, route.model).length >= 2);
        expect(logsFor(env, route.model).map((line) => line.outcome).slice(-2)).toEqual(['upstream_error', 'ok']);
      });
    });
  }

  // While the switch is off, record what the cross-format routes answer today (the table says
  // so when it is no longer 501, i.e. translation seems wired and the switch can be tried).
  test('probe: what cross-format routes answer with the switch off', async () => {
    if (CROSS_FORMAT_READY) return;
    for (const route of CLAUDE_ROUTES.filter((candidate) => candidate.crossFormat)) {
      const response = await fetch(`${env.tap.url}${MESSAGES}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${env.issued.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: route.model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
      });
      await response.arrayBuffer();
      recordProbe({ client: 'claude-code', route: route.id, model: route.model, status: response.status });
    }
  });
});
