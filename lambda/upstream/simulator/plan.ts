import { isRecord } from '../../observability/usage.ts';
import { estimateTokens } from '../../formats/token-estimate.ts';

/**
 * What the simulator answers, decided from the request alone, so a given request always gets
 * the same answer. Rules: after a tool result it acknowledges the result; when the last user
 * text names an offered tool it calls that tool (arguments built from the tool's schema);
 * otherwise it replies with text quoting the user. Thinking is added when the request asks for it.
 */
export interface SimulatorPlan {
  thinking: string | undefined;
  text: string | undefined;
  toolCall: { name: string; input: unknown; custom: boolean } | undefined;
  inputTokens: number;
}

export interface OfferedTool {
  name: string;
  schema: unknown;
  custom: boolean;
}

export interface Conversation {
  lastUserText: string;
  lastToolResult: string | undefined;
  tools: OfferedTool[];
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
  const tool = conversation.tools.find((candidate) => mentions(conversation.lastUserText, candidate.name));
  if (tool) {
    const input = tool.custom ? 'simulated input' : sampleFromSchema(tool.schema);
    return { thinking, text: undefined, toolCall: { name: tool.name, input, custom: tool.custom }, inputTokens };
  }
  if (conversation.outputSchema !== undefined) {
    return { thinking, text: JSON.stringify(sampleFromSchema(conversation.outputSchema)), toolCall: undefined, inputTokens };
  }
  const text = `Hello from the gateway simulator. You said: ${clip(conversation.lastUserText) || '(nothing)'}`;
  return { thinking, text, toolCall: undefined, inputTokens };
}

/** Output tokens reported for a plan, by the same estimate as the input side. */
export function outputTokens(plan: SimulatorPlan): number {
  return estimateTokens([plan.thinking, plan.text, plan.toolCall?.input]);
}

function mentions(text: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^A-Za-z0-9_])${escaped}($|[^A-Za-z0-9_])`).test(text);
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

/** Text of a content value in either format (a string, or parts with `text`). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : ''))
    .filter((text) => text.length > 0)
    .join('\n');
}
