import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { until } from '../support/processes.ts';
import { CLAUDE, claudeEnv, claudeSettings, runClaude, type ClaudeResult } from './clis.ts';
import { CellBook } from './conformance.ts';
import { startEnvironment, withBase, type ClientsEnvironment, type IssuedKey } from './environment.ts';
import { assertIsolated } from './isolation.ts';
import { clientRequests, describeRun, expectBedrockRewrite, expectUpstreamCredentials, logsFor, stubOf, tapPosts, toolCalls, toolResults } from './observe.ts';
import { CLAUDE_ROUTES, FALLBACK_ROUTES, listedClaudeModels, type RouteSpec } from './routes.ts';
import { CLAUDE_SCENARIOS as S } from './scenarios.ts';
import { describeClient, expectPlainTurn, POLL, reasoningRoundTrip, RUN_TIMEOUT_MS, type ClientDriver } from './shared-cells.ts';

/**
 * Claude Code (the real native CLI, `-p` mode, configured with the settings file the key CLI
 * printed, `claude --settings <file>`) through the gateway on every route. Upstream
 * answers are scripted per scenario; assertions look at what the CLI printed, what the upstream
 * received (stub routes) or what the CLI sent (the tap, for the in-process simulator), and the
 * gateway's log line. The rows are in scenarios.ts; the cells both CLIs share in shared-cells.ts.
 */
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

/** `claude --settings <the printed settings file> <args>` (`setup.claudeCode`), with the route's model names. */
function claude(route: RouteSpec, args: string[], options: ClaudeOptions = {}): Promise<ClaudeResult> {
  const issued = options.issued ?? env.issued;
  const home = options.home ?? env.dir('claude-home');
  const extra: Record<string, string | undefined> = { ANTHROPIC_MODEL: options.model ?? route.model, ...options.extraEnv };
  if (route.smallModel) extra.ANTHROPIC_DEFAULT_HAIKU_MODEL = route.smallModel;
  return runClaude([...claudeSettings(home, issued.setup.claudeCode), ...args], { env: claudeEnv({}, home, extra), cwd: options.cwd ?? env.dir('claude-work'), timeoutMs: RUN_TIMEOUT_MS });
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
  await until(() => env.gatewayLogs().some((line) => line.requestId === requestId), `the log line of ${requestId}`, POLL);
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

/** Claude Code for the shared cells: a turn is `-p ... --output-format json`; failures come back typed (Anthropic's error body). */
const driver: ClientDriver = {
  client: 'claude-code',
  book: new CellBook('claude-code', CLAUDE.name, CLAUDE.version),
  primary: 'anthropic',
  routes: CLAUDE_ROUTES,
  fallback: FALLBACK_ROUTES.claude,
  path: MESSAGES,
  format: 'messages',
  get env() {
    return env;
  },
  async sayHi(route, model) {
    const run = await claude(route, ['-p', 'Say hi', '--output-format', 'json'], { model });
    return { answer: expectSuccess(run).result, stdout: run.stdout };
  },
  // Turn 2 is `--continue` in the same HOME and folder.
  async twoTurns(route, model) {
    const home = env.dir('claude-home');
    const cwd = env.dir('claude-work');
    const first = expectSuccess(await claude(route, ['-p', 'Think, then answer', '--output-format', 'json'], { model, home, cwd }));
    const second = expectSuccess(await claude(route, ['-p', 'And a second turn', '--continue', '--output-format', 'json'], { model, home, cwd }));
    expect(second.session_id).toBe(first.session_id);
    return [first.result, second.result];
  },
  simulatorReasoning: /"signature":"(sim_[A-Za-z0-9_-]+)"/,
  probeBody: (model) => ({ model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
  sees: {
    overloadedStatus: 529,
    errorBody: (type) => ({ type: 'error', error: { type } }),
    dropped: {
      answer: 'Recovered without streaming.',
      ended: [/event: error\ndata: \{"type":"error","error":\{"type":"api_error"/],
      retried: (_turn, stub, route) => {
        // Claude Code's fallback is a non-streaming request (a translator may still stream upstream).
        expect(clientRequests(env, 'messages', MESSAGES).map((request) => request.stream)).toEqual([true, false]);
        const creates = stub.creates();
        expect(creates).toHaveLength(2);
        if (!route.crossFormat) expect(creates.map((exchange) => exchange.request.stream)).toEqual([true, false]);
      },
    },
    failedInStream: {
      ended: [/event: error\ndata: \{"type":"error","error":\{"type":"(overloaded_error|api_error)","message":"stub failure inside the stream"/],
      retried: (_turn, stub) => expect(stub.creates()).toHaveLength(2),
    },
  },
};

describeClient(driver, S, (route, cell) => {
  cell(S.text, async () => {
    const run = await claude(route, ['-p', 'Say hi', '--output-format', 'json']);
    const result = expectSuccess(run);
    const posts = tapPosts(env, MESSAGES);
    expect(posts).toHaveLength(1);
    expect(posts[0]?.responseHeaders['content-type']).toContain('text/event-stream');
    await expectPlainTurn(driver, route, result.result, 'Hello from the gateway simulator');
    if (route.stub === 'bedrock') expectBedrockRewrite(posts[0]!, stubOf(env, route)!.creates()[0]!.body!);
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

  cell(S.thinking, () => reasoningRoundTrip(driver, route, route.model, route.upstreamModel));

  cell(S.thinkingAlias, () => reasoningRoundTrip(driver, route, route.alias!.model, route.alias!.upstreamModel));

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
    await until(() => logsFor(env, route.smallModel!).length > 0, 'the small model\'s log line', POLL);
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
    await until(() => existsSync(cache), `the model cache ${cache}`, POLL);
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
    expect(message).toMatch(/^Key key_[0-9a-f]+ was revoked; ask the gateway's operator for a new one\.$/);
    expect(run.result?.result).toBe(`Failed to authenticate. API Error: 401 ${message}`);
  });

  cell(S.wrongBase, async () => {
    for (const [base, sentTo] of [[env.tap.url, '/v1/messages'], [`${env.tap.url}/second/v1`, '/second/v1/v1/messages']] as const) {
      env.reset();
      const run = await claude(route, ['-p', 'Say hi', '--output-format', 'json'], { issued: withBase(env.issued, { claudeCode: base }) });
      const posts = env.tap.exchanges.filter((exchange) => exchange.method === 'POST');
      expect(posts.map((exchange) => [exchange.url.split('?')[0], exchange.status])).toEqual([[sentTo, 421]]);
      const message = (JSON.parse(posts[0]!.response) as { error: { message: string } }).error.message;
      expect(message).toBe(`Wrong base URL: ${sentTo} is not served here; the Messages API is under /first. Set ANTHROPIC_BASE_URL (Claude Code) or baseURL (Anthropic SDK) to the gateway address followed by /first.`);
      expect(run.result).toMatchObject({ is_error: true, result: `API Error: 421 ${message}` });
      expect(stubOf(env, route)!.exchanges).toHaveLength(0);
    }
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
});
