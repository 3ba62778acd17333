import type { IrRequest, IrResultPart } from '../ir.ts';
import type { Json } from './shared.ts';
import { openAiSchema } from './tool-schemas.ts';

export interface ResponsesTarget {
  model: string;
  /** Output-token ceiling configured for the upstream, if any. */
  maxOutputTokens?: number;
}

const EFFORT_FOR_BUDGET = (budget: number): string => (budget < 4096 ? 'low' : budget < 12288 ? 'medium' : 'high');

/**
 * IR -> OpenAI Responses request (streaming, stateless). Function tools get an explicit `strict`
 * (omitting it makes Responses normalise schemas into strict mode), reasoning asks for
 * `encrypted_content` so it can be replayed, and only OpenAI-issued reasoning goes back.
 * @see docs/wire-formats.md §2.2-2.3, §4.1-4.5
 * @see https://platform.openai.com/docs/api-reference/responses/create
 */
export function emitResponsesRequest(ir: IrRequest, target: ResponsesTarget): { body: Json; dropped: string[] } {
  const dropped: string[] = [];
  const body: Json = { model: target.model, input: toItems(ir, dropped), stream: true, store: false };
  if (ir.system.length > 0) body.instructions = ir.system.map((block) => block.text).join('\n\n');
  if (ir.tools.length > 0) {
    body.tools = ir.tools.map((tool) =>
      tool.kind === 'custom'
        ? { type: 'custom', name: tool.name, ...(tool.description ? { description: tool.description } : {}), ...(tool.format ? { format: tool.format } : {}) }
        : { type: 'function', name: tool.name, ...(tool.description ? { description: tool.description } : {}), parameters: openAiSchema(tool.schema), strict: tool.strict ?? false },
    );
  }
  if (ir.toolChoice) body.tool_choice = ir.toolChoice.type === 'tool' ? { type: 'function', name: ir.toolChoice.name } : ir.toolChoice.type === 'any' ? 'required' : ir.toolChoice.type;
  if (ir.parallelToolCalls !== undefined && ir.tools.length > 0) body.parallel_tool_calls = ir.parallelToolCalls;
  const maxTokens = ir.maxOutputTokens === undefined ? target.maxOutputTokens : Math.min(ir.maxOutputTokens, target.maxOutputTokens ?? Infinity);
  if (maxTokens !== undefined) body.max_output_tokens = Math.max(16, maxTokens);
  if (ir.temperature !== undefined) body.temperature = ir.temperature;
  if (ir.topP !== undefined) body.top_p = ir.topP;
  if (ir.stopSequences.length > 0) dropped.push('stop_sequences');
  if (ir.reasoning) {
    const effort = ir.reasoning.effort ?? EFFORT_FOR_BUDGET(ir.reasoning.budgetTokens ?? 8192);
    body.reasoning = { effort, summary: ir.reasoning.summary ?? 'auto' };
    body.include = ['reasoning.encrypted_content'];
  }
  if (ir.responseFormat) {
    const { name, schema, strict, description } = ir.responseFormat;
    body.text = { format: { type: 'json_schema', name, schema, ...(strict !== undefined ? { strict } : {}), ...(description ? { description } : {}) } };
  }
  if (ir.user) body.safety_identifier = ir.user.slice(0, 64);
  if (ir.promptCacheKey) body.prompt_cache_key = ir.promptCacheKey;
  return { body, dropped };
}

function toItems(ir: IrRequest, dropped: string[]): Json[] {
  const items: Json[] = [];
  const customTools = new Set(ir.tools.filter((tool) => tool.kind === 'custom').map((tool) => tool.name));
  const namespaced = new Map(ir.tools.flatMap((tool) => (tool.namespace ? [[tool.name, tool.namespace] as const] : [])));
  const customCalls = new Set<string>();
  for (const turn of ir.turns) {
    const pending: Json[] = [];
    const flushMessage = () => {
      if (pending.length === 0) return;
      items.push({ type: 'message', role: turn.role === 'system' ? 'developer' : turn.role, content: pending.splice(0) });
    };
    for (const part of turn.parts) {
      if (part.type === 'text' || part.type === 'image' || part.type === 'document') {
        const content = toContent(part, turn.role === 'assistant');
        if (content) pending.push(content);
        continue;
      }
      flushMessage();
      if (part.type === 'tool_call') {
        const space = namespaced.get(part.name);
        if (customTools.has(part.name)) {
          customCalls.add(part.id);
          items.push({ type: 'custom_tool_call', call_id: part.id, name: space?.toolName ?? part.name, ...(space ? { namespace: space.name } : {}), input: String(part.input.input ?? '') });
        } else {
          items.push({ type: 'function_call', call_id: part.id, name: space?.toolName ?? part.name, ...(space ? { namespace: space.name } : {}), arguments: JSON.stringify(part.input) });
        }
      } else if (part.type === 'tool_result') {
        items.push({ type: customCalls.has(part.id) ? 'custom_tool_call_output' : 'function_call_output', call_id: part.id, output: toOutput(part.content, part.isError) });
      } else if (part.carrier?.provider === 'openai') {
        items.push({ type: 'reasoning', id: part.carrier.id, summary: part.summary.map((text) => ({ type: 'summary_text', text })), encrypted_content: part.carrier.encryptedContent });
      } else if (part.carrier) {
        dropped.push('reasoning from another provider');
      }
    }
    flushMessage();
  }
  return items;
}

function toContent(part: IrResultPart, assistant: boolean): Json | undefined {
  if (part.type === 'text') return part.text ? { type: assistant ? 'output_text' : 'input_text', text: part.text } : undefined;
  if (part.type === 'image') {
    const url = part.source.kind === 'base64' ? `data:${part.source.mediaType};base64,${part.source.data}` : part.source.url;
    return { type: 'input_image', image_url: url, detail: part.detail ?? 'auto' };
  }
  if (part.source.kind === 'text') return { type: 'input_text', text: part.source.text };
  if (part.source.kind === 'url') return { type: 'input_file', file_url: part.source.url };
  return { type: 'input_file', file_data: `data:${part.source.mediaType};base64,${part.source.data}`, filename: part.filename ?? part.title ?? 'document.pdf' };
}

/** Tool output: plain text stays a string; media make it a list of parts. OpenAI has no error flag. */
function toOutput(content: IrResultPart[], isError: boolean): string | Json[] {
  const prefix = isError ? 'Error: ' : '';
  if (content.every((part) => part.type === 'text')) return prefix + content.map((part) => (part as { text: string }).text).join('\n');
  const parts = content.map((part) => toContent(part, false)).filter((part): part is Json => part !== undefined);
  return isError ? [{ type: 'input_text', text: 'Error:' }, ...parts] : parts;
}

