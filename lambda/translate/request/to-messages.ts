import type { IrPart, IrRequest, IrTurn } from '../ir.ts';
import { customToolAsFunction, safeCallId, safeToolName } from './tool-schemas.ts';
import type { Json } from './shared.ts';
import { thinkingCannotStay } from '../../formats/messages/tool-turn.ts';

export interface MessagesTarget {
  model: string;
  /** Output-token ceiling configured for the upstream, if any. */
  maxOutputTokens?: number;
}

/** Messages requires `max_tokens`; every current Claude model accepts this many. */
export const DEFAULT_MAX_TOKENS = 32_000;

/** Thinking budgets for reasoning efforts (Anthropic needs >= 1024 and < max_tokens). */
const EFFORT_BUDGET: Record<string, number> = { minimal: 1024, low: 2048, medium: 8192, high: 16384, xhigh: 24576, max: 32000 };

/**
 * IR -> Anthropic Messages request (streaming). Applies the rules Anthropic enforces: user and
 * assistant turns alternate, tool results open the user turn that follows the call, only
 * Anthropic-issued thinking is replayed, and thinking is turned off where the history cannot
 * satisfy it.
 * @see docs/wire-formats.md §1.2-1.3, §4.1-4.5
 * @see https://docs.claude.com/en/api/messages
 */
export function emitMessagesRequest(ir: IrRequest, target: MessagesTarget): { body: Json; dropped: string[] } {
  const dropped: string[] = [];
  const ceiling = target.maxOutputTokens ?? Infinity;
  const maxTokens = Math.min(ir.maxOutputTokens ?? Math.min(DEFAULT_MAX_TOKENS, ceiling), ceiling);
  const body: Json = { model: target.model, max_tokens: maxTokens, messages: toMessages(ir.turns, dropped), stream: true };
  if (ir.system.length > 0) body.system = ir.system.map((block) => (block.cache ? { type: 'text', text: block.text, cache_control: { type: 'ephemeral' } } : { type: 'text', text: block.text }));
  if (ir.tools.length > 0) {
    body.tools = ir.tools.map((tool) => {
      if (tool.kind === 'custom') {
        const { description, schema } = customToolAsFunction(tool);
        return { name: safeToolName(tool.name), description, input_schema: schema };
      }
      const out: Json = { name: safeToolName(tool.name), input_schema: tool.schema };
      if (tool.description) out.description = tool.description;
      if (tool.strict) out.strict = true;
      if (tool.cache) out.cache_control = { type: 'ephemeral' };
      return out;
    });
  }
  const thinking = thinkingFor(ir, maxTokens, body.messages as Json[], dropped);
  if (thinking) body.thinking = thinking;
  const choice = toolChoice(ir, thinking !== undefined, dropped);
  if (choice) body.tool_choice = choice;
  if (ir.temperature !== undefined) {
    if (thinking) dropped.push('temperature (thinking is on)');
    else body.temperature = Math.min(1, ir.temperature);
  }
  if (ir.topP !== undefined && !thinking) body.top_p = ir.topP;
  if (ir.stopSequences.length > 0) body.stop_sequences = ir.stopSequences;
  if (ir.responseFormat) body.output_config = { format: { type: 'json_schema', schema: ir.responseFormat.schema } };
  if (ir.user) body.metadata = { user_id: ir.user };
  return { body, dropped };
}

function toMessages(turns: IrTurn[], dropped: string[]): Json[] {
  const messages: { role: 'user' | 'assistant'; content: Json[] }[] = [];
  for (const turn of turns) {
    // Mid-conversation instructions join the user side (Messages has no system turn without a beta).
    const role = turn.role === 'assistant' ? 'assistant' : 'user';
    const content = turn.parts.flatMap((part) => toBlocks(part, dropped, turn.role === 'system'));
    if (content.length === 0) continue;
    const last = messages.at(-1);
    if (last && last.role === role) last.content.push(...content);
    else messages.push({ role, content });
  }
  for (const message of messages) {
    // Tool results must come first in their user turn.
    if (message.role === 'user') message.content.sort((a, b) => Number(b.type === 'tool_result') - Number(a.type === 'tool_result'));
  }
  return messages;
}

function toBlocks(part: IrPart, dropped: string[], fromSystem: boolean): Json[] {
  switch (part.type) {
    case 'text':
      if (!part.text) return [];
      return [{ type: 'text', text: fromSystem ? `<system>\n${part.text}\n</system>` : part.text, ...(part.cache ? { cache_control: { type: 'ephemeral' } } : {}) }];
    case 'image':
      return [{ type: 'image', source: part.source.kind === 'base64' ? { type: 'base64', media_type: part.source.mediaType, data: part.source.data } : { type: 'url', url: part.source.url } }];
    case 'document': {
      const source = part.source.kind === 'text' ? { type: 'text', media_type: 'text/plain', data: part.source.text } : part.source.kind === 'base64' ? { type: 'base64', media_type: part.source.mediaType, data: part.source.data } : { type: 'url', url: part.source.url };
      return [{ type: 'document', source, ...(part.title || part.filename ? { title: part.title ?? part.filename } : {}) }];
    }
    case 'tool_call':
      return [{ type: 'tool_use', id: safeCallId(part.id), name: safeToolName(part.name), input: part.input }];
    case 'tool_result':
      return [{ type: 'tool_result', tool_use_id: safeCallId(part.id), content: part.content.flatMap((inner) => toBlocks(inner, dropped, false)), ...(part.isError ? { is_error: true } : {}) }];
    case 'reasoning':
      if (part.carrier?.provider !== 'anthropic') {
        if (part.carrier) dropped.push('reasoning from another provider');
        return [];
      }
      return 'signature' in part.carrier ? [{ type: 'thinking', thinking: part.summary.join('\n\n'), signature: part.carrier.signature }] : [{ type: 'redacted_thinking', data: part.carrier.redactedData }];
  }
}

function thinkingFor(ir: IrRequest, maxTokens: number, messages: Json[], dropped: string[]): Json | undefined {
  if (!ir.reasoning || ir.reasoning.effort === 'none') return undefined;
  const wanted = ir.reasoning.budgetTokens ?? EFFORT_BUDGET[ir.reasoning.effort ?? 'medium'] ?? 8192;
  const budget = Math.min(wanted, maxTokens - 1);
  if (budget < 1024) {
    dropped.push('thinking (max tokens too small for a thinking budget)');
    return undefined;
  }
  const cannotStay = thinkingCannotStay(messages);
  if (cannotStay) {
    dropped.push(cannotStay);
    return undefined;
  }
  return { type: 'enabled', budget_tokens: budget };
}

function toolChoice(ir: IrRequest, thinking: boolean, dropped: string[]): Json | undefined {
  let choice: Json | undefined;
  if (ir.toolChoice?.type === 'tool') choice = { type: 'tool', name: safeToolName(ir.toolChoice.name) };
  else if (ir.toolChoice) choice = { type: ir.toolChoice.type };
  if (thinking && (choice?.type === 'any' || choice?.type === 'tool')) {
    dropped.push('forced tool_choice (thinking is on)');
    choice = { type: 'auto' };
  }
  if (ir.parallelToolCalls === false && ir.tools.length > 0 && choice?.type !== 'none') choice = { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return choice;
}
