import type { IrPart, IrRequest, IrResultPart, IrTool, IrToolChoice, IrTurn, MediaSource } from '../ir.ts';
import { createHash } from 'node:crypto';
import { unpackCarrier } from '../reasoning-carry.ts';
import { BILLING_HEADER, isObject, num, objects, str, type Json } from './shared.ts';

/**
 * Anthropic Messages request -> IR.
 * @see docs/wire-formats.md §1.2-1.3, §4.1-4.5
 * @see https://docs.claude.com/en/api/messages
 */
export function parseMessagesRequest(body: Json): IrRequest {
  const dropped = new Set<string>();
  const request: IrRequest = {
    model: String(body.model),
    system: parseSystem(body.system),
    turns: objects(body.messages).map((message) => parseTurn(message, dropped)),
    tools: parseTools(body.tools, dropped),
    stopSequences: Array.isArray(body.stop_sequences) ? body.stop_sequences.filter((s): s is string => typeof s === 'string') : [],
    stream: body.stream === true,
    dropped: [],
  };
  const maxTokens = num(body.max_tokens);
  if (maxTokens !== undefined) request.maxOutputTokens = maxTokens;
  if (num(body.temperature) !== undefined) request.temperature = num(body.temperature);
  if (num(body.top_p) !== undefined) request.topP = num(body.top_p);
  if (body.top_k !== undefined) dropped.add('top_k');
  Object.assign(request, parseToolChoice(body.tool_choice));
  const reasoning = parseThinking(body.thinking, body.output_config);
  if (reasoning) request.reasoning = reasoning;
  const format = isObject(body.output_config) ? body.output_config.format : undefined;
  if (isObject(format) && format.type === 'json_schema' && isObject(format.schema)) {
    request.responseFormat = { name: 'structured_output', schema: format.schema, strict: true };
  }
  const user = isObject(body.metadata) ? str(body.metadata.user_id) : undefined;
  if (user) Object.assign(request, identityFrom(user));
  for (const field of ['container', 'mcp_servers', 'service_tier', 'inference_geo']) if (body[field] !== undefined) dropped.add(field);
  request.dropped = [...dropped];
  return request;
}

function parseSystem(system: unknown): IrRequest['system'] {
  if (typeof system === 'string') return system && !BILLING_HEADER.test(system) ? [{ text: system }] : [];
  return objects(system)
    .filter((block) => block.type === 'text' && typeof block.text === 'string' && !BILLING_HEADER.test(block.text))
    .map((block) => (block.cache_control ? { text: block.text as string, cache: true } : { text: block.text as string }));
}

function parseTurn(message: Json, dropped: Set<string>): IrTurn {
  const role = message.role === 'assistant' ? 'assistant' : message.role === 'system' ? 'system' : 'user';
  const content = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : objects(message.content);
  return { role, parts: content.flatMap((block) => parseBlock(block, dropped)) };
}

function parseBlock(block: Json, dropped: Set<string>): IrPart[] {
  switch (block.type) {
    case 'text':
      return [block.cache_control ? { type: 'text', text: String(block.text ?? ''), cache: true } : { type: 'text', text: String(block.text ?? '') }];
    case 'image':
    case 'document':
      return parseMedia(block, dropped);
    case 'tool_use':
      return [{ type: 'tool_call', id: String(block.id), name: String(block.name), input: isObject(block.input) ? block.input : {} }];
    case 'tool_result': {
      const content: IrResultPart[] = typeof block.content === 'string' ? [{ type: 'text', text: block.content }] : objects(block.content).flatMap((inner) => parseBlock(inner, dropped)).filter(isResultPart);
      return [{ type: 'tool_result', id: String(block.tool_use_id), content, isError: block.is_error === true }];
    }
    case 'thinking': {
      const unpacked = unpackCarrier(str(block.signature));
      const text = String(block.thinking ?? '');
      return [{ type: 'reasoning', summary: text ? [text] : [], carrier: unpacked?.carrier ?? { provider: 'anthropic', signature: String(block.signature ?? '') } }];
    }
    case 'redacted_thinking': {
      const unpacked = unpackCarrier(str(block.data));
      return [{ type: 'reasoning', summary: [], carrier: unpacked?.carrier ?? { provider: 'anthropic', redactedData: String(block.data ?? '') } }];
    }
    default:
      dropped.add(`${String(block.type)} blocks`);
      return [];
  }
}

function isResultPart(part: IrPart): part is IrResultPart {
  return part.type === 'text' || part.type === 'image' || part.type === 'document';
}

function parseMedia(block: Json, dropped: Set<string>): IrPart[] {
  const source = isObject(block.source) ? block.source : {};
  let media: MediaSource | { kind: 'text'; text: string } | undefined;
  if (source.type === 'base64') media = { kind: 'base64', mediaType: String(source.media_type), data: String(source.data) };
  else if (source.type === 'url') media = { kind: 'url', url: String(source.url) };
  else if (source.type === 'text' && block.type === 'document') media = { kind: 'text', text: String(source.data ?? '') };
  if (!media) {
    dropped.add(`${String(block.type)} source ${String(source.type)}`);
    return [];
  }
  if (block.type === 'image' && media.kind !== 'text') return [{ type: 'image', source: media }];
  const document: IrPart = { type: 'document', source: media };
  if (typeof block.title === 'string') document.title = block.title;
  return [document];
}

function parseTools(tools: unknown, dropped: Set<string>): IrTool[] {
  const parsed: IrTool[] = [];
  for (const tool of objects(tools)) {
    // Versioned types (web_search_20250305, bash_..., text_editor_...) are Anthropic-executed or Anthropic-schema tools.
    if (tool.type !== undefined && tool.type !== 'custom') {
      dropped.add(`tool ${String(tool.name ?? tool.type)}`);
      continue;
    }
    const ir: IrTool = { kind: 'function', name: String(tool.name), schema: isObject(tool.input_schema) ? tool.input_schema : { type: 'object' } };
    if (typeof tool.description === 'string') ir.description = tool.description;
    if (typeof tool.strict === 'boolean') ir.strict = tool.strict;
    if (tool.cache_control) ir.cache = true;
    parsed.push(ir);
  }
  return parsed;
}

function parseToolChoice(choice: unknown): { toolChoice?: IrToolChoice; parallelToolCalls?: boolean } {
  if (!isObject(choice)) return {};
  const result: { toolChoice?: IrToolChoice; parallelToolCalls?: boolean } = {};
  if (choice.type === 'tool' && typeof choice.name === 'string') result.toolChoice = { type: 'tool', name: choice.name };
  else if (choice.type === 'any' || choice.type === 'none' || choice.type === 'auto') result.toolChoice = { type: choice.type };
  if (typeof choice.disable_parallel_tool_use === 'boolean') result.parallelToolCalls = !choice.disable_parallel_tool_use;
  return result;
}

function parseThinking(thinking: unknown, outputConfig: unknown): IrRequest['reasoning'] {
  if (!isObject(thinking)) return undefined;
  const effort = isObject(outputConfig) ? str(outputConfig.effort) : undefined;
  if (thinking.type === 'enabled') {
    const budget = num(thinking.budget_tokens);
    return budget === undefined ? { effort: 'medium' } : { budgetTokens: budget };
  }
  if (thinking.type === 'adaptive') return { effort: (effort as NonNullable<IrRequest['reasoning']>['effort']) ?? 'medium' };
  return undefined;
}

/**
 * Claude Code's `metadata.user_id` is a JSON string (device, account, session). OpenAI wants a
 * short stable end-user id, and caches prompts best with a per-conversation key: a digest of the
 * whole value for the first, the session id for the second.
 */
function identityFrom(userId: string): Pick<IrRequest, 'user' | 'promptCacheKey'> {
  const identity: Pick<IrRequest, 'user' | 'promptCacheKey'> = { user: createHash('sha256').update(userId).digest('hex').slice(0, 32) };
  try {
    const parsed: unknown = JSON.parse(userId);
    if (isObject(parsed) && typeof parsed.session_id === 'string' && parsed.session_id) identity.promptCacheKey = parsed.session_id;
  } catch {
    // a plain string id: the digest is enough
  }
  return identity;
}
