import type { IrTool } from '../ir.ts';
import type { Json } from './shared.ts';

/**
 * Freeform (`custom`) tools have no JSON schema; formats without them get a function tool that
 * takes one string, `{"input": "..."}`, with the grammar folded into the description, and calls
 * are turned back into freeform calls on the way out.
 */
export function customToolAsFunction(tool: Extract<IrTool, { kind: 'custom' }>): { description: string; schema: Json } {
  const format = tool.format as { type?: string; syntax?: string; definition?: string } | undefined;
  const grammar = format?.type === 'grammar' && typeof format.definition === 'string' ? `\n\nThe input must follow this ${format.syntax ?? ''} grammar:\n${format.definition}` : '';
  return {
    description: `${tool.description ?? ''}${grammar}`.trim() || `Freeform tool ${tool.name}`,
    schema: { type: 'object', properties: { input: { type: 'string', description: 'The raw input for the tool.' } }, required: ['input'], additionalProperties: false },
  };
}

/** Tool names other formats accept (`^[a-zA-Z0-9_-]{1,64}$`); long names keep a hash suffix so they stay unique. */
export function safeToolName(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_-]/g, '_');
  if (cleaned.length <= 64) return cleaned;
  let hash = 0;
  for (const char of name) hash = (Math.imul(hash, 31) + char.charCodeAt(0)) >>> 0;
  return `${cleaned.slice(0, 55)}_${hash.toString(16).padStart(8, '0')}`;
}

/** Tool-call ids other formats accept (`^[a-zA-Z0-9_-]+$`). */
export function safeCallId(id: string): string {
  return id.replace(/[^a-zA-Z0-9_-]/g, '_') || 'call';
}

/** Tool schemas for OpenAI-side upstreams: without `$schema`, which some of them reject. */
export function openAiSchema(schema: Json): Json {
  if (!('$schema' in schema)) return schema;
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}
