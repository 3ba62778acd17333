import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CODEX, codexEnv, runCodex, runCodexTui, withProfile, writeCodexHome, type CodexResult } from './clis.ts';
import { CellBook } from './conformance.ts';
import { startEnvironment, withBase, type ClientsEnvironment, type IssuedKey } from './environment.ts';
import { assertIsolated } from './isolation.ts';
import { clientRequests, describeRun, expectUpstreamCredentials, stubOf, tapPosts, toolCalls, toolResults } from './observe.ts';
import { CODEX_ROUTES, FALLBACK_ROUTES, type RouteSpec } from './routes.ts';
import { CODEX_SCENARIOS as S } from './scenarios.ts';
import { describeClient, expectPlainTurn, reasoningRoundTrip, RUN_TIMEOUT_MS, type ClientDriver } from './shared-cells.ts';
import { containsDeep, type Json } from './upstream/wire.ts';

/**
 * Codex CLI (the real native binary: `codex exec --json`, and the TUI through a pseudo-terminal
 * for the title request) through the gateway on every route. Codex is configured as the key CLI
 * printed: its profile file, verbatim, and `--profile gateway`, over a config.toml of test-only
 * settings (model catalog, no phone-home). The
 * rows are in scenarios.ts; the cells both CLIs share in shared-cells.ts.
 */
const RESPONSES = '/second/v1/responses';
const PATCH = ['*** Begin Patch', '*** Update File: hello.txt', '@@', '-hello', '+hello patched', '*** End Patch'].join('\n');
const TITLE_SCHEMA = { type: 'object', properties: { title: { type: 'string', minLength: 1, maxLength: 36 } }, required: ['title'], additionalProperties: false };
const COMPACTION_PROMPT = 'CONTEXT CHECKPOINT COMPACTION';
const COMPACTION_HANDOFF = 'Another language model started to solve this problem';

let env: ClientsEnvironment;

beforeAll(async () => {
  assertIsolated();
  env = await startEnvironment('codex');
}, 90_000);

afterAll(async () => {
  await env?.close();
});

beforeEach(() => env.reset());

interface CodexOptions {
  model?: string;
  home?: string;
  cwd?: string;
  issued?: IssuedKey;
  compactTokenLimit?: number;
  /** `exec` arguments before the prompt (default: --skip-git-repo-check). */
  execArgs?: string[];
}

/** A CODEX_HOME holding the printed config.toml (plus test-only settings). */
function codexHome(options: CodexOptions & { trustedDir?: string } = {}): string {
  const home = options.home ?? env.dir('codex-home');
  const issued = options.issued ?? env.issued;
  writeCodexHome(home, { setup: issued.setup.codex, catalogPath: env.catalogPath, compactTokenLimit: options.compactTokenLimit, trustedDir: options.trustedDir });
  return home;
}

/** `codex exec --json -m <model> <prompt>` with the printed setup (`setup.codex`). */
function codexExec(route: RouteSpec, prompt: string, options: CodexOptions = {}): Promise<CodexResult> {
  const home = codexHome(options);
  const issued = options.issued ?? env.issued;
  const args = withProfile(issued.setup.codex, ['exec', '--json', ...(options.execArgs ?? ['--skip-git-repo-check']), '-m', options.model ?? route.model, prompt]);
  return runCodex(args, { env: codexEnv(issued.setup.codex.env, home), cwd: options.cwd ?? env.dir('codex-work'), timeoutMs: RUN_TIMEOUT_MS });
}

function expectSuccess(run: CodexResult): string[] {
  if (run.code !== 0 || run.messages.length === 0) throw new Error(`Codex did not succeed: ${describeRun(run)}`);
  // The catalog entry was accepted (no "Model metadata for `<m>` not found" fallback).
  expect(run.stderr).not.toContain('Model metadata for');
  return run.messages;
}

function gitRepo(): string {
  const dir = env.dir('codex-repo');
  writeFileSync(join(dir, 'hello.txt'), 'hello\n');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env: { PATH: '/usr/bin:/bin', HOME: dir, GIT_CONFIG_NOSYSTEM: '1' }, stdio: 'ignore' });
  git('init', '-q');
  git('add', '.');
  git('-c', 'user.email=conformance@example.invalid', '-c', 'user.name=conformance', 'commit', '-qm', 'init');
  return dir;
}

/** Codex for the shared cells: a turn is `codex exec --json`; failures come back as statuses and response.failed. */
const driver: ClientDriver = {
  client: 'codex',
  book: new CellBook('codex', CODEX.name, CODEX.version),
  primary: 'openai',
  routes: CODEX_ROUTES,
  fallback: FALLBACK_ROUTES.codex,
  path: RESPONSES,
  format: 'responses',
  get env() {
    return env;
  },
  async sayHi(route, model) {
    const run = await codexExec(route, 'Say hi', { model });
    return { answer: expectSuccess(run).at(-1), stdout: run.stdout };
  },
  // Turn 2 is `exec resume --last` with the same CODEX_HOME and folder.
  async twoTurns(_route, model) {
    const home = codexHome();
    const cwd = env.dir('codex-work');
    const first = await runCodex(withProfile(env.issued.setup.codex, ['exec', '--json', '--skip-git-repo-check', '-m', model, 'Think, then answer']), { env: codexEnv(env.issued.setup.codex.env, home), cwd, timeoutMs: RUN_TIMEOUT_MS });
    const firstMessages = expectSuccess(first);
    expect(first.events.some((event) => event.type === 'item.completed' && event.item?.type === 'reasoning')).toBe(true);
    // `exec resume` does not keep the session's model (it falls back to the configured default): name it again.
    const second = await runCodex(withProfile(env.issued.setup.codex, ['exec', 'resume', '--last', '--json', '--skip-git-repo-check', '-m', model, 'And a second turn']), { env: codexEnv(env.issued.setup.codex.env, home), cwd, timeoutMs: RUN_TIMEOUT_MS });
    return [firstMessages.at(-1), expectSuccess(second).at(-1)];
  },
  simulatorReasoning: /"encrypted_content":"([A-Za-z0-9+/=]+)"/,
  probeBody: (model) => ({ model, input: 'hi' }),
  sees: {
    overloadedStatus: 503,
    dropped: {
      answer: 'Recovered after reconnecting.',
      ended: ['"type":"response.failed"'],
      retried: (turn, stub) => {
        expect(stub.creates().map((exchange) => exchange.request.stream)).toEqual([true, true]);
        expect(turn.stdout).toMatch(/Reconnecting\.\.\. 1\/5/);
      },
    },
    failedInStream: {
      ended: ['"type":"response.failed"', 'stub failure inside the stream'],
      retried: (_turn, stub) => expect(stub.creates().map((exchange) => exchange.request.stream)).toEqual([true, true]),
    },
  },
};

describeClient(driver, S, (route, cell) => {
  cell(S.text, async () => {
    const messages = expectSuccess(await codexExec(route, 'Say hi'));
    // What Codex sent: the classic gpt-5.5 shape the catalog entry asks for.
    const [sent] = clientRequests(env, 'responses', RESPONSES);
    expect(sent?.stream).toBe(true);
    expect(sent?.tools).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'apply_patch', kind: 'custom' }), expect.objectContaining({ name: 'exec_command', kind: 'function' })]));
    expect(sent?.exchange.headers['x-openai-internal-codex-responses-lite']).toBeUndefined();
    expect(sent?.exchange.responseHeaders['content-type']).toContain('text/event-stream');
    await expectPlainTurn(driver, route, messages.at(-1), 'Hello from the gateway simulator. You said: Say hi');
  });

  cell(S.exec, async () => {
    const stub = stubOf(env, route);
    stub?.script({ tool: { name: 'exec_command', input: { cmd: 'echo hello-from-tool' } } }, { text: 'The command printed hello-from-tool.' });
    const run = await codexExec(route, stub ? 'Run echo hello-from-tool' : 'Use exec_command.');
    const messages = expectSuccess(run);
    const commands = run.events.filter((event) => event.type === 'item.completed' && event.item?.type === 'command_execution');
    expect(commands).toHaveLength(1);
    if (stub) {
      expect(commands[0]?.item).toMatchObject({ exit_code: 0, aggregated_output: 'hello-from-tool\n' });
      const creates = stub.creates();
      expect(creates).toHaveLength(2);
      const call = creates[0]?.answer?.toolCall;
      expect(toolCalls(creates[1]!.request)).toEqual([expect.objectContaining({ id: call?.id, name: 'exec_command' })]);
      expect(toolResults(creates[1]!.request)).toEqual([expect.objectContaining({ id: call?.id, output: expect.stringContaining('hello-from-tool') })]);
      expect(messages.at(-1)).toBe('The command printed hello-from-tool.');
      expectUpstreamCredentials(env, route);
    } else {
      // The simulator calls exec_command with {"cmd":"simulated"}: a failing command, reported back all the same.
      const requests = clientRequests(env, 'responses', RESPONSES);
      expect(requests).toHaveLength(2);
      const [call] = toolCalls(requests[1]!);
      expect(call).toMatchObject({ name: 'exec_command', input: JSON.stringify({ cmd: 'simulated' }) });
      expect(toolResults(requests[1]!)).toEqual([expect.objectContaining({ id: call?.id })]);
      expect(messages.at(-1)).toContain('The tool returned');
    }
  });

  cell(S.applyPatch, async () => {
    const stub = stubOf(env, route);
    stub?.script({ tool: { name: 'apply_patch', input: PATCH } }, { text: 'Patched hello.txt.' });
    const repo = gitRepo();
    const run = await codexExec(route, stub ? 'Patch hello.txt' : 'Use apply_patch on hello.txt.', { cwd: repo, execArgs: ['-s', 'workspace-write', '-C', repo] });
    const messages = expectSuccess(run);
    if (stub) {
      expect(readFileSync(join(repo, 'hello.txt'), 'utf8')).toBe('hello patched\n');
      expect(run.events.some((event) => event.type === 'item.completed' && event.item?.type === 'file_change' && event.item.status === 'completed')).toBe(true);
      const creates = stub.creates();
      expect(creates).toHaveLength(2);
      expect(creates[0]?.request.tools.some((tool) => tool.name === 'apply_patch')).toBe(true);
      const call = creates[0]?.answer?.toolCall;
      expect(toolResults(creates[1]!.request)).toEqual([expect.objectContaining({ id: call?.id, output: expect.stringContaining('Success. Updated the following files') })]);
      expect(messages.at(-1)).toBe('Patched hello.txt.');
    } else {
      const requests = clientRequests(env, 'responses', RESPONSES);
      expect(requests).toHaveLength(2);
      const [call] = toolCalls(requests[1]!);
      expect(call).toMatchObject({ name: 'apply_patch', input: 'simulated input' });
      expect(requests[1]!.body.input).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'custom_tool_call_output', call_id: call?.id })]));
      expect(readFileSync(join(repo, 'hello.txt'), 'utf8')).toBe('hello\n');
    }
  });

  cell(S.liteTool, async () => {
    const stub = stubOf(env, route);
    const script = 'const r = await tools.exec_command({cmd: "echo hello-from-tool"});\ntext(r.output);';
    // Through a translator the namespaced freeform tool is a function named functions__exec taking {"input"}.
    stub?.script({ tool: { name: stub.format === 'responses' ? 'exec' : 'functions__exec', input: script } }, { text: 'The script printed hello-from-tool.' });
    const run = await codexExec(route, stub ? 'Run echo hello-from-tool' : 'use exec_command with {"cmd": "echo hello-from-tool"}', { model: route.lite });
    const messages = expectSuccess(run);
    // What Codex sent: its default family's shape.
    const sent = clientRequests(env, 'responses', RESPONSES);
    expect(sent).toHaveLength(2);
    expect(sent[0]?.exchange.headers['x-openai-internal-codex-responses-lite']).toBe('true');
    expect(sent[0]?.body.tools).toBeUndefined();
    expect(sent[0]?.body.reasoning).toMatchObject({ context: 'all_turns' });
    expect(sent[0]?.tools).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'exec', kind: 'custom', namespace: 'functions' })]));
    // Codex ran the script: its output went back as the result of the exec call, in the exec call's namespace.
    const [call] = toolCalls(sent[1]!);
    expect(call).toMatchObject({ name: 'exec' });
    expect(sent[1]?.body.input).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'custom_tool_call', name: 'exec', namespace: 'functions' })]));
    expect(toolResults(sent[1]!)).toEqual([expect.objectContaining({ id: call?.id, output: expect.stringContaining('hello-from-tool') })]);
    if (stub) {
      const creates = stub.creates();
      expect(creates).toHaveLength(2);
      const upstreamCall = creates[0]?.answer?.toolCall;
      expect(toolResults(creates[1]!.request)).toEqual([expect.objectContaining({ id: upstreamCall?.id, output: expect.stringContaining('hello-from-tool') })]);
      expect(messages.at(-1)).toBe('The script printed hello-from-tool.');
    } else {
      expect(call?.input).toContain('await tools.exec_command({"cmd":"echo hello-from-tool"})');
      expect(messages.at(-1)).toContain('hello-from-tool');
    }
  });

  cell(S.reasoning, () => reasoningRoundTrip(driver, route, route.model, route.upstreamModel));

  cell(S.reasoningAlias, () => reasoningRoundTrip(driver, route, route.alias!.model, route.alias!.upstreamModel));

  cell(S.compaction, async () => {
    const stub = stubOf(env, route);
    stub?.script(
      { tool: { name: 'exec_command', input: { cmd: 'echo hello-from-tool' } }, inputTokens: 50_000 },
      { when: (request) => request.lastUserText.includes(COMPACTION_PROMPT), text: 'SUMMARY: the user asked to run echo; it printed hello-from-tool.' },
      { text: 'Done after compaction.' },
    );
    const run = await codexExec(route, stub ? 'Run echo hello-from-tool' : 'Use exec_command.', { compactTokenLimit: 2000 });
    const messages = expectSuccess(run);
    const sent = clientRequests(env, 'responses', RESPONSES);
    const kinds = sent.map((request) => (JSON.parse(String(request.exchange.headers['x-codex-turn-metadata'] ?? '{}')) as Json).request_kind);
    const compactionAt = kinds.indexOf('compaction');
    expect(compactionAt).toBeGreaterThan(0);
    expect(sent[compactionAt]?.body.tools).toEqual([]);
    expect(sent[compactionAt]?.lastUserText).toContain(COMPACTION_PROMPT);
    expect(sent[compactionAt]?.exchange.status).toBe(200);
    const after = sent[compactionAt + 1];
    expect(after?.items.some((item) => item.type === 'text' && item.role === 'user' && item.text.includes(COMPACTION_HANDOFF))).toBe(true);
    if (stub) {
      const creates = stub.creates();
      expect(creates).toHaveLength(3);
      expect(creates[1]?.request.lastUserText).toContain(COMPACTION_PROMPT);
      expect(creates[2]?.request.items.some((item) => item.type === 'text' && item.text.includes('SUMMARY: the user asked to run echo'))).toBe(true);
      expect(messages.at(-1)).toBe('Done after compaction.');
    }
  });

  cell(S.title, async () => {
    const stub = stubOf(env, route);
    stub?.script({ when: (request) => request.outputSchema === undefined, text: 'Hi from the first TUI turn.' });
    const cwd = env.dir('codex-tui');
    const home = codexHome({ trustedDir: cwd });
    const titleRequest = () => tapPosts(env, RESPONSES).find((exchange) => exchange.body.includes('"codex_output_schema"') && exchange.endedAt !== undefined);
    const run = await runCodexTui({ args: withProfile(env.issued.setup.codex, ['-m', route.model]), prompt: 'Say hi', done: () => titleRequest() !== undefined, env: codexEnv(env.issued.setup.codex.env, home, 'xterm-256color'), cwd, timeoutMs: RUN_TIMEOUT_MS });
    const exchange = titleRequest();
    if (!exchange) {
      const seen = tapPosts(env, RESPONSES).map((post) => `${post.status} schema=${post.body.includes('"codex_output_schema"')} ended=${post.endedAt !== undefined} hungUp=${post.clientHungUp}`);
      throw new Error(`no title request was made (requests seen: ${seen.join('; ') || 'none'}): ${describeRun(run)}`);
    }
    expect(run.timedOut).toBe(false);
    expect(exchange.headers.originator).toBe('codex-tui');
    const body = JSON.parse(exchange.body) as Json;
    expect(body.text).toMatchObject({ format: { type: 'json_schema', strict: true, name: 'codex_output_schema', schema: TITLE_SCHEMA } });
    expect(exchange.status).toBe(200);
    // The answer streamed back is JSON satisfying the schema.
    const done = /"type":"response\.output_text\.done"[^\n]*"text":("(?:[^"\\]|\\.)*")/.exec(exchange.response)?.[1];
    expect(done).toBeDefined();
    const title = JSON.parse(JSON.parse(done!) as string) as { title?: unknown };
    expect(typeof title.title).toBe('string');
    if (stub) {
      const asked = stub.creates().find((created) => created.request.outputSchema !== undefined || containsDeep(created.body, TITLE_SCHEMA));
      expect(asked).toBeDefined();
      expect(containsDeep(asked?.body, TITLE_SCHEMA)).toBe(true);
    }
  });

  cell(S.wrongBase, async () => {
    const run = await codexExec(route, 'Say hi', { issued: withBase(env.issued, { codex: `${env.tap.url}/first/v1` }), execArgs: ['--skip-git-repo-check', '-c', 'model_providers.gateway.stream_max_retries=0'] });
    expect(run.timedOut).toBe(false);
    expect(run.code).not.toBe(0);
    const posts = env.tap.exchanges.filter((exchange) => exchange.method === 'POST');
    expect(new Set(posts.map((exchange) => `${exchange.url} ${exchange.status}`))).toEqual(new Set(['/first/v1/responses 421']));
    const message = 'Wrong base URL: /first/v1/responses is not served here; the Responses API is under /second/v1. Set base_url (Codex config.toml) or baseURL (OpenAI SDK) to the gateway address followed by /second/v1.';
    expect(JSON.parse(posts[0]!.response)).toEqual({ error: { message, type: 'invalid_request_error', param: null, code: 'wrong_base_url' } });
    expect(`${run.stdout}\n${run.stderr}`).toContain(`unexpected status 421 Misdirected Request: ${message}`);
    expect(stubOf(env, route)!.exchanges).toHaveLength(0);
  });

  cell(S.auth, async () => {
    const revoked = await env.createKey('conformance-revoked');
    await env.revokeKey(revoked.id);
    env.reset();
    const run = await codexExec(route, 'Say hi', { issued: revoked });
    expect(run.timedOut).toBe(false);
    expect(run.code).not.toBe(0);
    expect(`${run.stdout}\n${run.stderr}`).toMatch(/401 Unauthorized/);
    const posts = tapPosts(env, RESPONSES);
    expect(posts.length).toBeGreaterThan(0);
    expect(new Set(posts.map((exchange) => exchange.status))).toEqual(new Set([401]));
    expect(JSON.parse(posts[0]!.response)).toMatchObject({ error: { code: 'invalid_api_key', message: expect.stringMatching(/^Key key_[0-9a-f]+ was revoked/) } });
    expect(`${run.stdout}\n${run.stderr}`).toMatch(/401 Unauthorized: Key key_[0-9a-f]+ was revoked/);
    expect(stubOf(env, route)!.exchanges).toHaveLength(0);
  });
});
