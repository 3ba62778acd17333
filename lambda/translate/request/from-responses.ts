import { GatewayError } from '../../errors.ts';
import type { IrPart, IrRequest, IrResultPart, IrTool, IrToolChoice, IrTurn, ReasoningEffort } from '../ir.ts';
import { unpackCarrier } from '../reasoning-carry.ts';
import { isObject, num, objects, parseArguments, parseDataUrl, str, type Json } from './shared.ts';

/**
 * OpenAI Responses request -> IR. Codex sends its base prompt as `developer` messages, every
 * item with an `id`, tools in namespaces or as freeform `custom` tools, and (in "lite" mode) tool
 * lists as `additional_tools` input items; all of these are understood here.
 * @see docs/wire-formats.md §2.2-2.3, §4.1-4.5
 * @see https://platform.openai.com/docs/api-reference/responses/create
 */
export function parseResponsesRequest(body: Json): IrRequest {
  if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
    throw new GatewayError('invalid_request', 'previous_response_id needs stored responses, which this route does not keep; send the whole conversation in input (store: false).', { param: 'previous_response_id' });
  }
  const dropped = new Set<string>();
  const tools: IrTool[] = [];
  addTools(tools, body.tools, dropped);
  const request: IrRequest = { model: String(body.model), system: [], turns: [], tools, stopSequences: [], stream: body.stream === true, dropped: [] };
  if (typeof body.instructions === 'string' && body.instructions) request.system.push({ text: body.instructions });
  const items = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : objects(body.input);
  for (const item of items) addItem(request, item, tools, dropped);
  Object.assign(request, parseToolChoice(body.tool_choice, dropped));
  if (typeof body.parallel_tool_calls === 'boolean') request.parallelToolCalls = body.parallel_tool_calls;
  if (num(body.max_output_tokens) !== undefined) request.maxOutputTokens = num(body.max_output_tokens);
  if (num(body.temperature) !== undefined) request.temperature = num(body.temperature);
  if (num(body.top_p) !== undefined) request.topP = num(body.top_p);
  if (isObject(body.reasoning)) {
    const effort = str(body.reasoning.effort) as ReasoningEffort | undefined;
    if (effort !== 'none') request.reasoning = { effort: effort ?? 'medium', summary: str(body.reasoning.summary) ?? 'auto' };
  }
  const format = isObject(body.text) ? body.text.format : undefined;
  if (isObject(format) && format.type === 'json_schema' && isObject(format.schema)) {
    request.responseFormat = { name: str(format.name) ?? 'structured_output', schema: format.schema };
    if (typeof format.strict === 'boolean') request.responseFormat.strict = format.strict;
    if (typeof format.description === 'string') request.responseFormat.description = format.description;
  } else if (isObject(format) && format.type === 'json_object') dropped.add('text.format json_object');
  const user = str(body.safety_identifier) ?? str(body.user);
  if (user) request.user = user;
  if (typeof body.prompt_cache_key === 'string') request.promptCacheKey = body.prompt_cache_key;
  request.dropped = [...dropped];
  return request;
}

function addItem(request: IrRequest, item: Json, tools: IrTool[], dropped: Set<string>): void {
  const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
  switch (type) {
    case 'message': {
      const role = String(item.role);
      const parts = parseContent(item.content, dropped);
      if (role === 'system' || role === 'developer') {
        const text = parts.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
        // Instructions before the conversation starts are the system prompt; later ones stay in place.
        if (request.turns.length === 0) request.system.push({ text });
        else push(request, 'system', [{ type: 'text', text }]);
      } else push(request, role === 'assistant' ? 'assistant' : 'user', parts);
      return;
    }
    case 'function_call':
    case 'custom_tool_call': {
      const namespaced = typeof item.namespace === 'string' ? `${item.namespace}__${String(item.name)}` : String(item.name);
      const input = type === 'custom_tool_call' ? { input: String(item.input ?? '') } : parseArguments(item.arguments);
      push(request, 'assistant', [{ type: 'tool_call', id: String(item.call_id), name: namespaced, input }]);
      return;
    }
    case 'function_call_output':
    case 'custom_tool_call_output':
      push(request, 'user', [{ type: 'tool_result', id: String(item.call_id), content: parseOutput(item.output, dropped), isError: false }]);
      return;
    case 'reasoning': {
      const unpacked = unpackCarrier(str(item.encrypted_content));
      const summary = objects(item.summary).map((part) => String(part.text ?? ''));
      push(request, 'assistant', [{ type: 'reasoning', summary: unpacked?.text !== undefined ? [unpacked.text] : summary, carrier: unpacked?.carrier ?? { provider: 'openai', id: String(item.id), encryptedContent: str(item.encrypted_content) ?? null } }]);
      return;
    }
    case 'additional_tools':
      addTools(tools, item.tools, dropped);
      return;
    case 'item_reference':
      throw new GatewayError('invalid_request', 'item_reference needs stored responses, which this route does not keep; send the items themselves.', { param: 'input' });
    default:
      dropped.add(`${String(type)} items`);
  }
}

/** Consecutive items of one role form one turn (Messages and Chat need them merged). */
function push(request: IrRequest, role: IrTurn['role'], parts: IrPart[]): void {
  const last = request.turns.at(-1);
  if (last && last.role === role && role !== 'system') last.parts.push(...parts);
  else request.turns.push({ role, parts });
}

function parseContent(content: unknown, dropped: Set<string>): IrPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return objects(content).flatMap((part): IrPart[] => {
    switch (part.type) {
      case 'input_text':
      case 'output_text':
        return [{ type: 'text', text: String(part.text ?? '') }];
      case 'refusal':
        return [{ type: 'text', text: String(part.refusal ?? '') }];
      case 'input_image': {
        if (typeof part.image_url !== 'string') {
          dropped.add('input_image by file_id');
          return [];
        }
        const data = parseDataUrl(part.image_url);
        const image: IrPart = { type: 'image', source: data ? { kind: 'base64', ...data } : { kind: 'url', url: part.image_url } };
        if (typeof part.detail === 'string') image.detail = part.detail;
        return [image];
      }
      case 'input_file': {
        const data = typeof part.file_data === 'string' ? parseDataUrl(part.file_data) : undefined;
        const source = data ? { kind: 'base64' as const, ...data } : typeof part.file_url === 'string' ? { kind: 'url' as const, url: part.file_url } : undefined;
        if (!source) {
          dropped.add('input_file by file_id');
          return [];
        }
        const document: IrPart = { type: 'document', source };
        if (typeof part.filename === 'string') document.filename = part.filename;
        return [document];
      }
      default:
        dropped.add(`${String(part.type)} content`);
        return [];
    }
  });
}

function parseOutput(output: unknown, dropped: Set<string>): IrResultPart[] {
  if (typeof output === 'string') return [{ type: 'text', text: output }];
  return parseContent(output, dropped).filter((part): part is IrResultPart => part.type === 'text' || part.type === 'image' || part.type === 'document');
}

function addTools(tools: IrTool[], list: unknown, dropped: Set<string>, namespace?: string): void {
  for (const tool of objects(list)) {
    const name = String(tool.name ?? '');
    const wireName = namespace ? `${namespace}__${name}` : name;
    if (tool.type === 'function') {
      const ir: IrTool = { kind: 'function', name: wireName, schema: isObject(tool.parameters) ? tool.parameters : { type: 'object', properties: {} } };
      if (typeof tool.description === 'string' && tool.description) ir.description = tool.description;
      if (typeof tool.strict === 'boolean') ir.strict = tool.strict;
      if (namespace) ir.namespace = { name: namespace, toolName: name };
      tools.push(ir);
    } else if (tool.type === 'custom') {
      const ir: IrTool = { kind: 'custom', name: wireName };
      if (typeof tool.description === 'string') ir.description = tool.description;
      if (tool.format !== undefined) ir.format = tool.format;
      // Codex's lite models call their `exec` tool in the `functions` namespace (0.171).
      if (namespace) ir.namespace = { name: namespace, toolName: name };
      tools.push(ir);
    } else if (tool.type === 'namespace') {
      addTools(tools, tool.tools, dropped, name);
    } else {
      dropped.add(`tool ${String(tool.type)}`);
    }
  }
}

function parseToolChoice(choice: unknown, dropped: Set<string>): { toolChoice?: IrToolChoice } {
  if (choice === 'auto' || choice === 'none') return { toolChoice: { type: choice } };
  if (choice === 'required') return { toolChoice: { type: 'any' } };
  if (isObject(choice) && (choice.type === 'function' || choice.type === 'custom') && typeof choice.name === 'string') return { toolChoice: { type: 'tool', name: choice.name } };
  if (isObject(choice)) {
    dropped.add(`tool_choice ${String(choice.type)}`);
    return { toolChoice: { type: 'auto' } };
  }
  return {};
}
