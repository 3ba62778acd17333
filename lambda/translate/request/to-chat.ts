import type { IrRequest, IrResultPart } from '../ir.ts';
import { customToolAsFunction, openAiSchema, safeToolName } from './tool-schemas.ts';
import type { Json } from './shared.ts';

export interface ChatTarget {
  model: string;
  /**
   * OpenAI's own API wants `max_completion_tokens` (reasoning models reject `max_tokens`);
   * most compatible servers (vLLM, Ollama, llama.cpp, DeepSeek) know only `max_tokens`.
   */
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** Output-token ceiling configured for the upstream, if any. */
  maxOutputTokens?: number;
}

/**
 * IR -> Chat Completions request (streaming with usage). Chat has no opaque reasoning state and
 * text-only tool results, so those are dropped (and said so).
 * @see docs/wire-formats.md §3.1, §4.1-4.5
 * @see https://platform.openai.com/docs/api-reference/chat/create
 */
export function emitChatRequest(ir: IrRequest, target: ChatTarget): { body: Json; dropped: string[] } {
  const dropped = new Set<string>();
  const messages: Json[] = [];
  if (ir.system.length > 0) messages.push({ role: 'system', content: ir.system.map((block) => block.text).join('\n\n') });
  for (const turn of ir.turns) {
    if (turn.role === 'assistant') {
      const text = turn.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
      const calls = turn.parts.flatMap((part) => (part.type === 'tool_call' ? [{ id: part.id, type: 'function', function: { name: safeToolName(part.name), arguments: JSON.stringify(part.input) } }] : []));
      if (turn.parts.some((part) => part.type === 'reasoning')) dropped.add('reasoning history');
      if (text || calls.length > 0) messages.push({ role: 'assistant', content: text || null, ...(calls.length > 0 ? { tool_calls: calls } : {}) });
      continue;
    }
    // Tool messages must directly follow the assistant message that made the calls.
    for (const part of turn.parts) {
      if (part.type === 'tool_result') messages.push({ role: 'tool', tool_call_id: part.id, content: resultText(part.content, part.isError, dropped) });
    }
    const content = turn.parts.flatMap((part) => (part.type === 'text' || part.type === 'image' || part.type === 'document' ? [toContentPart(part)] : []));
    if (content.length === 0) continue;
    const role = turn.role === 'system' ? 'system' : 'user';
    messages.push({ role, content: content.every((part) => part.type === 'text') ? content.map((part) => part.text).join('\n') : content });
  }

  const body: Json = { model: target.model, messages, stream: true, stream_options: { include_usage: true } };
  if (ir.tools.length > 0) {
    body.tools = ir.tools.map((tool) => {
      if (tool.kind === 'custom') {
        const { description, schema } = customToolAsFunction(tool);
        return { type: 'function', function: { name: safeToolName(tool.name), description, parameters: schema } };
      }
      return { type: 'function', function: { name: safeToolName(tool.name), ...(tool.description ? { description: tool.description } : {}), parameters: openAiSchema(tool.schema), ...(tool.strict ? { strict: true } : {}) } };
    });
    if (ir.parallelToolCalls !== undefined) body.parallel_tool_calls = ir.parallelToolCalls;
  }
  if (ir.toolChoice) body.tool_choice = ir.toolChoice.type === 'tool' ? { type: 'function', function: { name: safeToolName(ir.toolChoice.name) } } : ir.toolChoice.type === 'any' ? 'required' : ir.toolChoice.type;
  const maxTokens = ir.maxOutputTokens === undefined ? target.maxOutputTokens : Math.min(ir.maxOutputTokens, target.maxOutputTokens ?? Infinity);
  if (maxTokens !== undefined) body[target.maxTokensField] = maxTokens;
  if (ir.temperature !== undefined) body.temperature = ir.temperature;
  if (ir.topP !== undefined) body.top_p = ir.topP;
  if (ir.stopSequences.length > 0) {
    body.stop = ir.stopSequences.slice(0, 4);
    if (ir.stopSequences.length > 4) dropped.add('stop_sequences beyond 4');
  }
  // Compatible servers differ on `reasoning_effort` (many reject unknown fields), and Claude Code
  // asks for thinking on every request: a Chat upstream reasons as its model does.
  if (ir.reasoning) dropped.add('reasoning effort');
  if (ir.responseFormat) {
    const { name, schema, strict } = ir.responseFormat;
    body.response_format = { type: 'json_schema', json_schema: { name, schema, ...(strict !== undefined ? { strict } : {}) } };
  }
  if (ir.user) body.user = ir.user.slice(0, 64);
  return { body, dropped: [...dropped] };
}

type ChatPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: Json } | { type: 'file'; file: Json };

function toContentPart(part: IrResultPart): ChatPart {
  if (part.type === 'text') return { type: 'text', text: part.text };
  if (part.type === 'image') {
    const url = part.source.kind === 'base64' ? `data:${part.source.mediaType};base64,${part.source.data}` : part.source.url;
    return { type: 'image_url', image_url: { url, ...(part.detail ? { detail: part.detail } : {}) } };
  }
  if (part.source.kind === 'text') return { type: 'text', text: part.source.text };
  if (part.source.kind === 'url') return { type: 'text', text: `[document: ${part.source.url}]` };
  return { type: 'file', file: { file_data: `data:${part.source.mediaType};base64,${part.source.data}`, filename: part.filename ?? part.title ?? 'document.pdf' } };
}

/** Chat tool messages carry text only. */
function resultText(content: IrResultPart[], isError: boolean, dropped: Set<string>): string {
  if (content.some((part) => part.type !== 'text')) dropped.add('images and documents in tool results');
  const text = content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
  return isError ? `Error: ${text}` : text;
}
