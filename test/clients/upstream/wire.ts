/**
 * The three upstream wire formats read into one shape, so a scenario can say "the tool result
 * came back" or "the thinking signature came back" once and check it against whatever format
 * the route's upstream (or, through the tap, the client) speaks.
 */
export type WireFormat = 'messages' | 'responses' | 'chat';

export interface OfferedTool {
  name: string;
  /** `custom` = free-form input (Responses custom tools such as Codex's apply_patch). */
  kind: 'function' | 'custom' | 'other';
  schema: unknown;
  /** Responses: the namespace it was offered in (Codex's lite shape: `functions`, `clock`...). */
  namespace?: string;
}

export type Item =
  | { type: 'text'; role: string; text: string }
  /** Messages `thinking` (signature), Responses `reasoning` (encrypted_content), Chat `reasoning_content`. */
  | { type: 'reasoning'; text: string; signature: string | undefined }
  | { type: 'tool_call'; id: string; name: string; input: string }
  | { type: 'tool_result'; id: string; output: string; isError: boolean };

export interface WireRequest {
  format: WireFormat;
  model: string;
  stream: boolean;
  tools: OfferedTool[];
  items: Item[];
  /** A structured-output JSON schema, wherever the format carries it. */
  outputSchema: unknown;
  /** The last user text (what the user or the client last said). */
  lastUserText: string;
}

export type Json = Record<string, unknown>;

export const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown): string => (typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value));
const list = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isRecord) : []);

/** Text of a content value in any of the formats (a string, or parts carrying `text`). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  return list(content)
    .map((part) => (typeof part.text === 'string' ? part.text : ''))
    .filter((text) => text.length > 0)
    .join('\n');
}

export function readRequest(format: WireFormat, body: Json): WireRequest {
  const items = format === 'messages' ? messagesItems(body) : format === 'responses' ? responsesItems(body) : chatItems(body);
  const lastUser = [...items].reverse().find((item) => item.type === 'text' && item.role === 'user');
  return {
    format,
    model: str(body.model),
    stream: body.stream === true,
    tools: offeredTools(format, body),
    items,
    outputSchema: outputSchema(format, body),
    lastUserText: lastUser?.type === 'text' ? lastUser.text : '',
  };
}

function offeredTools(format: WireFormat, body: Json): OfferedTool[] {
  const tools = list(body.tools);
  if (format === 'messages') return tools.map((tool) => ({ name: str(tool.name), kind: 'input_schema' in tool ? 'function' : 'other', schema: tool.input_schema }));
  if (format === 'chat') {
    return tools.map((tool) => {
      const fn = isRecord(tool.function) ? tool.function : {};
      return { name: str(fn.name ?? tool.name), kind: tool.type === 'function' ? 'function' : tool.type === 'custom' ? 'custom' : 'other', schema: fn.parameters };
    });
  }
  // Codex's default (lite) models declare their tools in `additional_tools` input items.
  const declared = [...tools, ...list(body.input).filter((item) => item.type === 'additional_tools').flatMap((item) => list(item.tools))];
  const flat = declared.flatMap((tool) => (tool.type === 'namespace' ? list(tool.tools).map((inner) => ({ ...inner, namespace: str(tool.name) })) : [tool]));
  return flat.map((tool) => ({ name: str(tool.name), kind: tool.type === 'function' ? 'function' : tool.type === 'custom' ? 'custom' : 'other', schema: tool.parameters ?? tool.format, ...(typeof tool.namespace === 'string' ? { namespace: tool.namespace } : {}) }));
}

function outputSchema(format: WireFormat, body: Json): unknown {
  if (format === 'responses') {
    const fmt = isRecord(body.text) && isRecord(body.text.format) ? body.text.format : undefined;
    return fmt?.type === 'json_schema' ? fmt.schema : undefined;
  }
  if (format === 'chat') {
    const fmt = isRecord(body.response_format) ? body.response_format : undefined;
    return fmt?.type === 'json_schema' && isRecord(fmt.json_schema) ? fmt.json_schema.schema : undefined;
  }
  const fmt = isRecord(body.output_config) && isRecord(body.output_config.format) ? body.output_config.format : isRecord(body.output_format) ? body.output_format : undefined;
  return fmt?.type === 'json_schema' ? fmt.schema : undefined;
}

function messagesItems(body: Json): Item[] {
  const items: Item[] = [];
  const system = body.system;
  if (system !== undefined) items.push({ type: 'text', role: 'system', text: contentText(system) });
  for (const message of list(body.messages)) {
    const role = str(message.role);
    if (typeof message.content === 'string') {
      items.push({ type: 'text', role, text: message.content });
      continue;
    }
    for (const block of list(message.content)) {
      if (block.type === 'text') items.push({ type: 'text', role, text: str(block.text) });
      else if (block.type === 'thinking') items.push({ type: 'reasoning', text: str(block.thinking), signature: str(block.signature) || undefined });
      else if (block.type === 'redacted_thinking') items.push({ type: 'reasoning', text: '', signature: str(block.data) || undefined });
      else if (block.type === 'tool_use') items.push({ type: 'tool_call', id: str(block.id), name: str(block.name), input: JSON.stringify(block.input ?? {}) });
      else if (block.type === 'tool_result') items.push({ type: 'tool_result', id: str(block.tool_use_id), output: contentText(block.content), isError: block.is_error === true });
    }
  }
  return items;
}

function responsesItems(body: Json): Item[] {
  const items: Item[] = [];
  if (typeof body.instructions === 'string') items.push({ type: 'text', role: 'system', text: body.instructions });
  if (typeof body.input === 'string') return [...items, { type: 'text', role: 'user', text: body.input }];
  for (const item of list(body.input)) {
    const type = item.type ?? 'message';
    if (type === 'message') items.push({ type: 'text', role: str(item.role), text: contentText(item.content) });
    else if (type === 'reasoning') {
      const text = [...list(item.summary), ...list(item.content)].map((part) => str(part.text)).join('\n');
      items.push({ type: 'reasoning', text, signature: str(item.encrypted_content) || undefined });
    } else if (type === 'function_call') items.push({ type: 'tool_call', id: str(item.call_id), name: str(item.name), input: str(item.arguments) });
    else if (type === 'custom_tool_call') items.push({ type: 'tool_call', id: str(item.call_id), name: str(item.name), input: str(item.input) });
    else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      items.push({ type: 'tool_result', id: str(item.call_id), output: contentText(item.output), isError: false });
    }
  }
  return items;
}

function chatItems(body: Json): Item[] {
  const items: Item[] = [];
  for (const message of list(body.messages)) {
    const role = str(message.role);
    const reasoning = message.reasoning_content ?? message.reasoning;
    if (typeof reasoning === 'string' && reasoning.length > 0) items.push({ type: 'reasoning', text: reasoning, signature: undefined });
    if (role === 'tool') {
      items.push({ type: 'tool_result', id: str(message.tool_call_id), output: contentText(message.content), isError: false });
      continue;
    }
    const text = contentText(message.content);
    if (text.length > 0) items.push({ type: 'text', role, text });
    for (const call of list(message.tool_calls)) {
      const fn = isRecord(call.function) ? call.function : isRecord(call.custom) ? call.custom : {};
      items.push({ type: 'tool_call', id: str(call.id), name: str(fn.name), input: str(fn.arguments ?? fn.input) });
    }
  }
  return items;
}

/** JSON with object keys sorted, so equal values compare equal whatever their key order. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isRecord(value)) return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** True when `haystack` contains a value deep-equal to `needle` anywhere inside it. */
export function containsDeep(haystack: unknown, needle: unknown): boolean {
  if (canonical(haystack) === canonical(needle)) return true;
  if (Array.isArray(haystack)) return haystack.some((value) => containsDeep(value, needle));
  if (isRecord(haystack)) return Object.values(haystack).some((value) => containsDeep(value, needle));
  return false;
}
