/**
 * The intermediate representation every translation goes through.
 *
 * Client requests are parsed into an `IrRequest` and emitted in the upstream's format; upstream
 * streams are decoded into `IrEvent`s and encoded in the client's format. With two client
 * formats and three upstream formats this needs 2 parsers, 3 emitters, 3 decoders and 2
 * encoders, and the hard parts (a client's stream grammar: sequence numbers, item ids, block
 * indexes, terminal events) exist exactly once each. The IR is deliberately close to the
 * Messages model (ordered content parts, tool calls with object inputs) because that is the
 * richest of the three; what a format cannot carry is recorded in `dropped`.
 */

// ---------------------------------------------------------------- requests

/** Opaque reasoning state: only the provider that issued it can verify it. */
export type ReasoningCarrier =
  | { provider: 'anthropic'; signature: string }
  | { provider: 'anthropic'; redactedData: string }
  | { provider: 'openai'; id: string; encryptedContent: string | null };

export type MediaSource = { kind: 'base64'; mediaType: string; data: string } | { kind: 'url'; url: string };

export type IrPart =
  | { type: 'text'; text: string; cache?: boolean }
  | { type: 'image'; source: MediaSource; detail?: string }
  | { type: 'document'; source: MediaSource | { kind: 'text'; text: string }; filename?: string; title?: string }
  | {
      type: 'tool_call';
      /** The call id clients echo back (`tool_use.id` / `call_id` / `tool_calls[].id`). */
      id: string;
      /** The tool's wire name (see IrTool.name). */
      name: string;
      /** Function tools: the arguments object. Custom tools: `{ input: string }`. */
      input: Record<string, unknown>;
    }
  | { type: 'tool_result'; id: string; content: IrResultPart[]; isError: boolean }
  | {
      type: 'reasoning';
      /** Visible reasoning text, one entry per summary part (Anthropic thinking has one). */
      summary: string[];
      carrier: ReasoningCarrier | undefined;
    };

export type IrResultPart = Extract<IrPart, { type: 'text' | 'image' | 'document' }>;

/** `system` turns are mid-conversation instructions (Claude Code, Codex `developer` messages). */
export interface IrTurn {
  role: 'user' | 'assistant' | 'system';
  parts: IrPart[];
}

export type IrTool =
  | {
      kind: 'function';
      /** Name on the wire of formats without namespaces (`ns__name` for namespaced tools). */
      name: string;
      description?: string;
      schema: Record<string, unknown>;
      strict?: boolean;
      /** Responses namespace the tool came from, so calls can be returned in it. */
      namespace?: { name: string; toolName: string };
      cache?: boolean;
    }
  | {
      /** Freeform tool (Codex `apply_patch`, or `exec` in the `functions` namespace): called with one string, here `{ input }`. */
      kind: 'custom';
      name: string;
      description?: string;
      format?: unknown;
      namespace?: { name: string; toolName: string };
    };

export type IrToolChoice = { type: 'auto' } | { type: 'any' } | { type: 'none' } | { type: 'tool'; name: string };

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export interface IrRequest {
  model: string;
  /** Leading instructions, in order (system prompt / `instructions` / leading developer messages). */
  system: { text: string; cache?: boolean }[];
  turns: IrTurn[];
  tools: IrTool[];
  toolChoice?: IrToolChoice;
  parallelToolCalls?: boolean;
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  stopSequences: string[];
  /** Reasoning asked for: an effort, a token budget, or both; undefined = not asked for. */
  reasoning?: { effort?: ReasoningEffort; budgetTokens?: number; summary?: string };
  responseFormat?: { name: string; schema: Record<string, unknown>; strict?: boolean; description?: string };
  user?: string;
  promptCacheKey?: string;
  /** Whether the client wants an SSE stream. */
  stream: boolean;
  /** Features of the client request the translation could not carry (said in a header and the log). */
  dropped: string[];
}

// ---------------------------------------------------------------- responses

export type IrStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal' | 'pause_turn' | 'context_window';

/** Usage with Anthropic semantics: `inputTokens` excludes cache reads and writes. */
export interface IrUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
}

export type IrErrorCategory =
  | 'invalid_request'
  | 'context_length'
  | 'authentication'
  | 'permission'
  | 'not_found'
  | 'request_too_large'
  | 'rate_limit'
  | 'quota'
  | 'overloaded'
  | 'timeout'
  | 'server';

export interface IrError {
  category: IrErrorCategory;
  message: string;
}

export type IrBlock = { kind: 'text' } | { kind: 'refusal' } | { kind: 'reasoning' } | { kind: 'tool_call'; id: string; name: string };

/**
 * A decoded upstream stream. Blocks are opened, filled and closed one at a time, in output order;
 * `usage` events carry cumulative values (later ones overwrite); `finish` comes after the last
 * block and before the end; `error` ends the stream.
 */
export type IrEvent =
  | { type: 'start'; id?: string; model?: string }
  | { type: 'block_start'; block: IrBlock }
  | { type: 'text_delta'; text: string }
  | { type: 'reasoning_delta'; text: string; /** starts a new summary part */ newPart?: boolean }
  | { type: 'tool_input_delta'; json: string }
  | { type: 'block_stop'; carrier?: ReasoningCarrier }
  | { type: 'usage'; usage: Partial<IrUsage> }
  | { type: 'finish'; reason: IrStopReason; stopSequence?: string }
  | { type: 'error'; error: IrError };

/** What an encoder needs to know about the request it answers. */
export interface EncoderContext {
  /** The model name the client asked for (reported back, not the upstream's name). */
  model: string;
  tools: IrTool[];
  /** Echoed fields the Responses object carries. */
  request: IrRequest;
}
