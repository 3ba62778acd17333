/**
 * Codex's model catalog shape (`GET <base_url>/models?client_version=…` → `{"models": [ModelInfo…]}`),
 * which Codex reads from a custom provider when the provider's credential comes from an `auth`
 * command (docs/sign-in-reference.md, "Codex's model catalog"). The fields are those Codex 0.171.0 cannot
 * do without (checked with the real binary: an entry lacking any one of them makes Codex drop the
 * whole answer and keep its built-in catalog), plus the few that make it send the request shape
 * the gateway serves for every upstream: the classic Responses shape (not "responses lite"),
 * apply_patch as a free-form tool, the `shell_command` tool.
 * @see https://github.com/openai/codex/blob/main/codex-rs/protocol/src/openai_models.rs (ModelInfo)
 */
export interface CodexModelInfo {
  slug: string;
  display_name: string;
  description: string;
  supported_reasoning_levels: { effort: string; description: string }[];
  default_reasoning_level: string;
  shell_type: 'shell_command';
  visibility: 'list';
  supported_in_api: true;
  priority: number;
  base_instructions: string;
  support_verbosity: false;
  apply_patch_tool_type: 'freeform';
  truncation_policy: { mode: 'tokens'; limit: number };
  supports_parallel_tool_calls: true;
  experimental_supported_tools: [];
  use_responses_lite: false;
}

/**
 * Codex uses an entry's `base_instructions` as the whole of its system prompt for that model
 * (verified with 0.171.0: an empty one sends none at all), and a catalog entry cannot ask for
 * Codex's built-in prompt. So the gateway gives one of its own, short and model-neutral: the
 * tools' own descriptions carry the details.
 */
export const GATEWAY_CODEX_INSTRUCTIONS = [
  'You are a coding agent working in the user\'s terminal through Codex, with the tools Codex gives you to read files, run commands and edit code in the current workspace.',
  'Understand the request and the code around it before changing anything; prefer small, focused changes that follow the project\'s existing style, and never undo changes you did not make.',
  'Use the shell tool to inspect the workspace and to run builds and tests, and the apply_patch tool for every file edit.',
  'Keep going until the task is done or you need the user\'s decision; then say briefly what you changed, how you checked it, and what is left.',
].join('\n\n');

const REASONING_LEVELS = [
  { effort: 'low', description: 'Faster answers with lighter reasoning' },
  { effort: 'medium', description: 'Balanced speed and reasoning depth' },
  { effort: 'high', description: 'Deeper reasoning for harder problems' },
];

/** One catalog entry per model the caller may use, in the order given (Codex sorts its picker by `priority`). */
export function codexCatalog(models: readonly { id: string; upstream: string }[]): { models: CodexModelInfo[] } {
  return {
    models: models.map(({ id, upstream }, index) => ({
      slug: id,
      display_name: id,
      description: `Served through the gateway (${upstream}).`,
      supported_reasoning_levels: REASONING_LEVELS,
      default_reasoning_level: 'medium',
      shell_type: 'shell_command',
      visibility: 'list',
      supported_in_api: true,
      priority: index + 1,
      base_instructions: GATEWAY_CODEX_INSTRUCTIONS,
      support_verbosity: false,
      apply_patch_tool_type: 'freeform',
      truncation_policy: { mode: 'tokens', limit: 10_000 },
      supports_parallel_tool_calls: true,
      experimental_supported_tools: [],
      use_responses_lite: false,
    })),
  };
}
