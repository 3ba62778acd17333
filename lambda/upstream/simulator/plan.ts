import { isRecord } from '../../observability/usage.ts';
import { estimateTokens } from '../../formats/token-estimate.ts';

/**
 * What the simulator answers, decided from the request alone, so a given request always gets
 * the same answer. Rules: after a tool result it acknowledges the result; when told to use a tool
 * it calls that tool (see `chooseTool`); otherwise it replies with text quoting the user (JSON
 * satisfying the schema when structured output is asked for). Thinking is added when the request
 * asks for it.
 */
export interface SimulatorPlan {
  thinking: string | undefined;
  text: string | undefined;
  toolCall: ToolCall | undefined;
  inputTokens: number;
}

export interface ToolCall {
  name: string;
  /** The Responses namespace the tool was offered in; the call goes back in it. */
  namespace?: string;
  input: unknown;
  custom: boolean;
}

export interface OfferedTool {
  name: string;
  namespace?: string;
  schema: unknown;
  /** A freeform tool: called with one string. */
  custom: boolean;
  description?: string;
}

export interface Conversation {
  /** The user's latest words: the last text of the last user message (Claude Code puts reminders before it). */
  lastUserText: string;
  lastToolResult: string | undefined;
  tools: OfferedTool[];
  /** A tool the request's tool_choice forces (`*`: any one). */
  forcedTool: string | undefined;
  wantsThinking: boolean;
  /** A JSON schema the reply text must satisfy (structured output). */
  outputSchema: unknown;
  promptParts: unknown[];
}

const QUOTE_LIMIT = 120;

export function planReply(conversation: Conversation): SimulatorPlan {
  const thinking = conversation.wantsThinking ? 'The user wants a reply; the simulator plans a short answer.' : undefined;
  const inputTokens = estimateTokens(conversation.promptParts);
  if (conversation.lastToolResult !== undefined) {
    return { thinking, text: `The tool returned: ${clip(conversation.lastToolResult)}`, toolCall: undefined, inputTokens };
  }
  const toolCall = chooseTool(conversation);
  if (toolCall) return { thinking, text: undefined, toolCall, inputTokens };
  if (conversation.outputSchema !== undefined) {
    return { thinking, text: JSON.stringify(sampleFromSchema(conversation.outputSchema)), toolCall: undefined, inputTokens };
  }
  const text = `Hello from the gateway simulator. You said: ${clip(conversation.lastUserText) || '(nothing)'}`;
  return { thinking, text, toolCall: undefined, inputTokens };
}

/**
 * The tool to call, if the request says to use one:
 * - tool_choice forcing a tool (by name, or any: the first offered);
 * - the user's latest words naming an offered tool (`Bash`, `exec_command`, a namespaced tool by
 *   its name or as `namespace.name`): the earliest named wins. Arguments follow the word `with`:
 *   a JSON object for a function tool (`use Bash with {"command": "ls"}`), the rest of the text
 *   for a freeform tool; without them a function tool gets the least its schema requires;
 * - code mode (Codex's default models, 0.171): a tool the offered freeform `exec` tool declares
 *   (`tools.exec_command(...)`) is called through `exec`, with a script that calls it and prints
 *   its output.
 */
export function chooseTool(conversation: Conversation): ToolCall | undefined {
  const { tools, lastUserText: text, forcedTool } = conversation;
  if (forcedTool !== undefined) {
    const tool = forcedTool === '*' ? tools[0] : tools.find((candidate) => candidate.name === forcedTool || qualified(candidate) === forcedTool);
    if (tool) return callOf(tool, undefined);
  }
  const named = firstNamed(text, tools, (tool) => [tool.name, qualified(tool), dotted(tool)]);
  if (named) return callOf(named.item, argumentsAfter(text, named.at));
  // Through a translator the freeform tool is a function taking {"input": string} named functions__exec.
  const exec = tools.find((tool) => typeof tool.description === 'string' && (tool.name === 'exec' || tool.name.endsWith('__exec')) && (tool.custom || takesOneString(tool.schema)));
  if (!exec) return undefined;
  const nested = [...(exec.description as string).matchAll(/^### `([A-Za-z0-9_]+)`/gm)].map((match) => match[1] as string);
  const inner = firstNamed(text, nested, (name) => [name]);
  if (!inner) return undefined;
  // Nested tools take an object or a string (apply_patch takes the patch).
  const args = argumentsAfter(text, inner.at);
  const argument = args === undefined ? '{}' : JSON.stringify(jsonObject(args) ?? args);
  const script = `const result = await tools.${inner.item}(${argument});\ntext(result && result.output !== undefined ? result.output : result);`;
  return { name: exec.name, ...(exec.namespace ? { namespace: exec.namespace } : {}), input: exec.custom ? script : { input: script }, custom: exec.custom };
}

function callOf(tool: OfferedTool, args: string | undefined): ToolCall {
  const namespace = tool.namespace ? { namespace: tool.namespace } : {};
  if (tool.custom) return { name: tool.name, ...namespace, input: args ?? 'simulated input', custom: true };
  const object = jsonObject(args);
  // A freeform tool as a translator hands it over: its one string is the text given.
  if (object === undefined && args !== undefined && takesOneString(tool.schema)) return { name: tool.name, ...namespace, input: { input: args }, custom: false };
  return { name: tool.name, ...namespace, input: object ?? sampleFromSchema(tool.schema), custom: false };
}

/** A schema of one string member `input`: how translators pass a freeform tool to formats without them. */
function takesOneString(schema: unknown): boolean {
  return isRecord(schema) && isRecord(schema.properties) && Object.keys(schema.properties).join() === 'input';
}

/** `namespace.name`, also for a tool a translator flattened to `namespace__name`. */
function dotted(tool: OfferedTool): string | undefined {
  if (tool.namespace) return `${tool.namespace}.${tool.name}`;
  return tool.name.includes('__') ? tool.name.replace('__', '.') : undefined;
}

/** The name a namespaced tool has on formats without namespaces (as the translator flattens it). */
function qualified(tool: OfferedTool): string {
  return tool.namespace ? `${tool.namespace}__${tool.name}` : tool.name;
}

/** Of `items`, the one the text names first (as a whole word, by any of its names), and where. */
function firstNamed<T>(text: string, items: readonly T[], namesOf: (item: T) => (string | undefined)[]): { item: T; at: number } | undefined {
  let first: { item: T; at: number } | undefined;
  for (const item of items) {
    for (const name of namesOf(item)) {
      if (!name) continue;
      const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const at = new RegExp(`(^|[^A-Za-z0-9_.])${escaped}($|[^A-Za-z0-9_])`).exec(text)?.index;
      if (at !== undefined && (first === undefined || at < first.at)) first = { item, at };
    }
  }
  return first;
}

/** What follows "with" after the tool's name: `use X with <arguments>`. */
function argumentsAfter(text: string, at: number): string | undefined {
  const match = /\swith\s+([\s\S]+)$/.exec(text.slice(at));
  if (!match) return undefined;
  const args = (match[1] as string).trim();
  const fenced = /^`+([\s\S]*?)`+$/.exec(args);
  return fenced ? (fenced[1] as string) : args;
}

function jsonObject(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end < start) return undefined;
  try {
    const value: unknown = JSON.parse(text.slice(start, end + 1));
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Output tokens reported for a plan, by the same estimate as the input side. */
export function outputTokens(plan: SimulatorPlan): number {
  return estimateTokens([plan.thinking, plan.text, plan.toolCall?.input]);
}

function clip(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > QUOTE_LIMIT ? `${flat.slice(0, QUOTE_LIMIT)}...` : flat;
}

/** A minimal value that satisfies a JSON schema's types and required fields. */
export function sampleFromSchema(schema: unknown): unknown {
  if (!isRecord(schema)) return {};
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ('const' in schema) return schema.const;
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return 'simulated';
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'null':
      return null;
    default: {
      const properties = isRecord(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? schema.required.filter((key): key is string => typeof key === 'string') : [];
      return Object.fromEntries(required.map((key) => [key, sampleFromSchema(properties[key])]));
    }
  }
}

/** The last text part of a content value in either format: the user's own words after any reminders. */
export function lastText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts = content.filter((part) => isRecord(part) && typeof part.text === 'string' && part.text.length > 0) as { text: string }[];
  return texts.at(-1)?.text ?? '';
}

/** Text of a content value in either format (a string, or parts with `text`). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : ''))
    .filter((text) => text.length > 0)
    .join('\n');
}
