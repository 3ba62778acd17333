import type { Scenario } from './conformance.ts';

/**
 * The rows of the conformance table, per client: what each scenario is called and, where the
 * label does not say it, what a pass means (the notes under the table). The test files say how
 * each cell runs. The rows both clients have share their id and label; a note says how that
 * client sees the failure, so it stays each client's own.
 */
const SIMULATOR_CANNOT_FAIL = 'the built-in simulator never fails, so there is no upstream error to script';
const RENAMED_ROUTE = 'Same, through a renamed route (upstreamModel)';

interface SharedNotes {
  fallback529: string;
  fallback429?: string;
  overloaded: string;
  midstream: string;
  streamError: string;
}

/** The text row, and the upstream-failure rows every client's table ends with (shared-cells.ts). */
function sharedRows(notes: SharedNotes) {
  return {
    text: { id: 'text', label: 'Plain text turn (streaming)' },
    fallback529: { id: 'fallback-529', label: 'Primary answers 529 (overloaded): the fallback serves the turn', routeIndependent: true, note: notes.fallback529 },
    fallback429: { id: 'fallback-429', label: 'Primary answers 429: the fallback serves the turn', routeIndependent: true, note: notes.fallback429 },
    retry429: { id: 'retry-429', label: 'Upstream 429 + retry-after: retried, then succeeds', notApplicable: { simulator: SIMULATOR_CANNOT_FAIL } },
    overloaded: { id: 'overloaded', label: 'Upstream overloaded: retried, then succeeds', notApplicable: { simulator: SIMULATOR_CANNOT_FAIL }, note: notes.overloaded },
    midstream: { id: 'midstream', label: 'Upstream connection drops mid-stream: recovers', notApplicable: { simulator: SIMULATOR_CANNOT_FAIL }, note: notes.midstream },
    streamError: { id: 'stream-error', label: 'Upstream fails inside the stream: recovers', notApplicable: { simulator: SIMULATOR_CANNOT_FAIL }, note: notes.streamError },
  } satisfies Record<string, Scenario>;
}

export type SharedRows = ReturnType<typeof sharedRows>;

const CROSS_RENAMES = (row: string) => `cross-format routes always name another provider model: the ${row} row covers renaming there`;

export const CLAUDE_SCENARIOS = {
  ...sharedRows({
    fallback529: 'A route whose primary is the Anthropic upstream and whose fallback is the Responses upstream (through the translator): the primary\'s 529 never reaches Claude Code; one 200 with x-gateway-upstream naming the fallback, and the gateway log lists both tries.',
    overloaded: 'The upstream answers as it does when overloaded: Anthropic 529 overloaded_error, OpenAI formats 503, Bedrock ServiceUnavailableException (503). Claude Code gets 529 overloaded_error every time, retries, and gets the answer.',
    midstream: 'The gateway ends the stream with event: error; Claude Code retries without streaming and gets the answer.',
    streamError: 'After a few events the upstream fails in its own format: Anthropic event: error (overloaded_error), Responses response.failed, a Chat Completions chunk carrying error, Bedrock an exception frame (modelStreamErrorException). Claude Code gets event: error, retries, and gets the answer; the gateway logs the first try upstream_error.',
  }),
  tool: { id: 'tool', label: 'Bash tool round trip (--allowedTools Bash)' },
  thinking: {
    id: 'thinking',
    label: 'Thinking, then a second turn (--continue)',
    note: 'The thinking block of turn 1 must reach the upstream again on turn 2 with its signature unchanged (Responses upstream: the reasoning item with the same encrypted_content). A Chat Completions upstream has neither signatures nor a standard field for sending reasoning back: there the reasoning_content must reach Claude Code as a thinking block (with whatever signature the gateway mints) that Claude Code sends back on turn 2 and the gateway accepts.',
  },
  thinkingAlias: { id: 'thinking-alias', label: RENAMED_ROUTE, notApplicable: { openai: CROSS_RENAMES('thinking'), 'openai-chat': CROSS_RENAMES('thinking') } },
  countTokens: {
    id: 'count-tokens',
    label: '/context → count_tokens',
    note: 'Every count_tokens call is answered 200 and none falls back to a max_tokens:1 messages call. The Anthropic upstream counts; Bedrock counts through CountTokens (the route names a foundation-model id, the only kind CountTokens takes); on the other routes the gateway estimates (x-token-count: estimated).',
  },
  subagent: {
    id: 'subagent',
    label: 'Explore subagent on the second model name',
    notApplicable: { simulator: 'the simulator fills only required tool fields, so it never asks the Agent tool for subagent_type "Explore"' },
    note: 'ANTHROPIC_DEFAULT_HAIKU_MODEL names a second route; the Explore subagent (called in the foreground with model "haiku": agents run in the background and on the caller\'s model by default since Claude Code 2.1.2xx) must be routed by it (gateway log and upstream model).',
  },
  discovery: {
    id: 'discovery',
    label: 'Model discovery (GET /first/v1/models)',
    routeIndependent: true,
    note: 'CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY=1 with nonessential traffic allowed (inside the namespace only); ~/.claude/cache/gateway-models.json must then hold exactly the routes\' ids that contain claude or anthropic.',
  },
  auth: { id: 'auth-401', label: 'Revoked key: 401 stops at once', routeIndependent: true, note: 'One POST reaches the gateway (401, x-should-retry: false), no upstream call, the CLI exits 1 within seconds reporting API error 401.' },
  authMessage: { id: 'auth-401-message', label: 'Revoked key: the gateway\'s 401 message is shown', routeIndependent: true },
  wrongBase: {
    id: 'wrong-base',
    label: 'Wrong base URL (no /first; the Responses base): the gateway\'s message is shown',
    routeIndependent: true,
    note: 'ANTHROPIC_BASE_URL set to the bare address, then to <address>/second/v1: Claude Code calls /v1/messages and /second/v1/v1/messages. A 404 would only show "There\'s an issue with the selected model"; the gateway answers 421 naming the base to use, which Claude Code prints as "API Error: 421 <message>" after one request.',
  },
  budgetWarning: {
    id: 'budget-warning',
    label: 'Key past 75 % of its dollar budget: Claude Code warns',
    routeIndependent: true,
    note: 'keys update --usd-per-day with 80 % of it spent: the gateway answers with anthropic-ratelimit-unified-* headers describing the key\'s own budget, and Claude Code (2.1.225+, with the gateway key\'s claude-gateway audience) reports them as a rate_limit_event: allowed_warning, utilization 0.8, past the 0.75 threshold, the reset at UTC midnight. Interactively it shows the same as a spend-limit warning; the /usage spend bar is drawn only for Anthropic\'s own gateway sign-in.',
  },
  budgetSpent: {
    id: 'budget-spent',
    label: 'Key over its dollar budget: the refusal is shown, not retried',
    routeIndependent: true,
    note: '429 billing_error with x-should-retry: false and retry-after until UTC midnight: one request, no upstream call, Claude Code reports the spend limit.',
  },
} satisfies Record<string, Scenario>;

export const CODEX_SCENARIOS = {
  ...sharedRows({
    fallback529: 'A route whose primary is the Responses upstream and whose fallback is the Anthropic upstream (through the translator): the primary\'s 529 never reaches Codex; one 200 with x-gateway-upstream naming the fallback, and the gateway log lists both tries.',
    fallback429: 'Codex\'s HTTP layer does not retry a 429 (retry_429: false in its provider settings); its turn loop does, after a delay (the next row); the gateway\'s fallback turns the rate limit into a served turn at once.',
    overloaded: 'The upstream answers as it does when overloaded: OpenAI formats 503, Anthropic 529 overloaded_error, Bedrock ServiceUnavailableException (503). Codex gets 503 every time, retries, and gets the answer.',
    midstream: 'The gateway ends the stream with response.failed (server_error); Codex reconnects and gets the answer.',
    streamError: 'After a few events the upstream fails in its own format: Responses response.failed, Anthropic event: error (overloaded_error), a Chat Completions chunk carrying error, Bedrock an exception frame (modelStreamErrorException). Codex gets response.failed, reconnects, and gets the answer; the gateway logs the first try upstream_error.',
  }),
  exec: { id: 'exec-command', label: 'exec_command shell tool round trip' },
  applyPatch: {
    id: 'apply-patch',
    label: 'apply_patch custom tool edits a file (temp git repo)',
    note: 'With the model catalog entry Codex sends the classic gpt-5.5 request shape: apply_patch is a `custom` (free-form grammar) tool; the patch must edit the file and its output go back upstream. On the simulator, which cannot write a valid patch, the custom tool call and Codex\'s error output round trip and the file is left alone.',
  },
  liteTool: {
    id: 'lite-tool',
    label: 'Default model family (gpt-6.2-sol shape): code-mode exec tool round trip',
    note: 'Codex 0.171\'s default models send no `tools`: an `additional_tools` input item declares them in namespaces (the freeform JavaScript `exec` tool in `functions`), with `reasoning.context` and the lite header. The route\'s lite name is catalogued as a copy of gpt-6.2-sol (the same-format route uses gpt-6.2-sol itself). The upstream calls `exec` (through a translator: `functions__exec`) with a script calling `tools.exec_command`; Codex must run it and send the output back (`custom_tool_call_output`), and the upstream must get it as the result of its call. On the simulator the prompt names the nested tool (`use exec_command with {...}`) and the simulator writes the script.',
  },
  reasoning: {
    id: 'reasoning',
    label: 'Reasoning, then a second turn (exec resume --last)',
    note: 'The reasoning item of turn 1 must reach the upstream again on turn 2 with its encrypted_content unchanged (Anthropic upstream: the thinking block with the same signature). A Chat Completions upstream has no encrypted reasoning: there the reasoning_content must reach Codex as a reasoning item that Codex sends back on turn 2 and the gateway accepts.',
  },
  reasoningAlias: { id: 'reasoning-alias', label: RENAMED_ROUTE, notApplicable: { anthropic: CROSS_RENAMES('reasoning'), 'openai-chat': CROSS_RENAMES('reasoning'), bedrock: CROSS_RENAMES('reasoning') } },
  compaction: {
    id: 'compaction',
    label: 'Auto-compaction turn (model_auto_compact_token_limit)',
    note: 'model_auto_compact_token_limit = 2000 and an answer reporting 50 000 input tokens: Codex sends a compaction request (request_kind "compaction", no tools) and starts the next request from the summary.',
  },
  title: {
    id: 'title',
    label: 'TUI title request (text.format json_schema)',
    note: 'The real TUI, driven through a pseudo-terminal (util-linux `script`): after the first turn it asks for a title with structured output (json_schema "codex_output_schema", strict); the upstream must receive the schema and its JSON answer must come back.',
  },
  wrongBase: {
    id: 'wrong-base',
    label: 'Wrong base URL (the Messages base): the gateway\'s message is shown',
    routeIndependent: true,
    note: 'base_url set to <address>/first/v1: Codex calls /first/v1/responses and gets a 421 in the Responses format naming the base to use, printed as "unexpected status 421 Misdirected Request: <message>" (run with stream_max_retries = 0: Codex otherwise reconnects 5 times first).',
  },
  auth: { id: 'auth-401', label: 'Revoked key: 401, Codex gives up with the error', routeIndependent: true, note: 'Codex retries 401s (it ignores x-should-retry: false; 6 attempts, about 8 s): the run must end with the 401 error, every attempt a 401, none reaching the upstream.' },
} satisfies Record<string, Scenario>;
