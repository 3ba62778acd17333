import { createHash, randomBytes } from 'node:crypto';
import { isRecord } from '../../observability/usage.ts';
import { contentText, lastText, outputTokens, planReply, type Conversation, type SimulatorPlan } from './plan.ts';

/** Reads what the simulator needs from a Messages request. */
export function messagesConversation(body: Record<string, unknown>): Conversation {
  // Claude Code puts a mid-conversation `system` message after the user's turn.
  const messages = Array.isArray(body.messages) ? body.messages.filter(isRecord).filter((message) => message.role !== 'system') : [];
  const last = messages.at(-1);
  const blocks = Array.isArray(last?.content) ? last.content.filter(isRecord) : [];
  const result = blocks.find((block) => block.type === 'tool_result');
  const thinking = isRecord(body.thinking) ? body.thinking.type : undefined;
  const tools = (Array.isArray(body.tools) ? body.tools.filter(isRecord) : [])
    .filter((tool) => typeof tool.name === 'string' && isRecord(tool.input_schema))
    .map((tool) => ({ name: tool.name as string, schema: tool.input_schema, custom: false, ...(typeof tool.description === 'string' ? { description: tool.description } : {}) }));
  const choice = isRecord(body.tool_choice) ? body.tool_choice : undefined;
  const format = isRecord(body.output_config) && isRecord(body.output_config.format) ? body.output_config.format.schema : undefined;
  return {
    lastUserText: last?.role === 'user' ? lastText(last.content) : '',
    lastToolResult: result ? contentText(result.content) || '(empty)' : undefined,
    tools,
    forcedTool: choice?.type === 'any' ? '*' : choice?.type === 'tool' && typeof choice.name === 'string' ? choice.name : undefined,
    wantsThinking: thinking === 'enabled' || thinking === 'adaptive',
    outputSchema: format,
    promptParts: [body.system, body.messages, body.tools],
  };
}

interface Block {
  type: 'thinking' | 'text' | 'tool_use';
  start: Record<string, unknown>;
  deltas: Record<string, unknown>[];
  final: Record<string, unknown>;
}

function blocksOf(plan: SimulatorPlan): Block[] {
  const blocks: Block[] = [];
  if (plan.thinking !== undefined) {
    const signature = `sim_${createHash('sha256').update(plan.thinking).digest('base64url')}`;
    blocks.push({
      type: 'thinking',
      start: { type: 'thinking', thinking: '', signature: '' },
      deltas: [{ type: 'thinking_delta', thinking: plan.thinking }, { type: 'signature_delta', signature }],
      final: { type: 'thinking', thinking: plan.thinking, signature },
    });
  }
  if (plan.text !== undefined) {
    blocks.push({
      type: 'text',
      start: { type: 'text', text: '' },
      deltas: words(plan.text).map((text) => ({ type: 'text_delta', text })),
      final: { type: 'text', text: plan.text },
    });
  }
  if (plan.toolCall !== undefined) {
    const id = `toolu_sim${randomBytes(10).toString('hex')}`;
    const json = JSON.stringify(plan.toolCall.input);
    const half = Math.ceil(json.length / 2);
    blocks.push({
      type: 'tool_use',
      start: { type: 'tool_use', id, name: plan.toolCall.name, input: {} },
      deltas: ['', json.slice(0, half), json.slice(half)].map((partial_json) => ({ type: 'input_json_delta', partial_json })),
      final: { type: 'tool_use', id, name: plan.toolCall.name, input: plan.toolCall.input },
    });
  }
  return blocks;
}

function usageOf(plan: SimulatorPlan) {
  return { input_tokens: plan.inputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: outputTokens(plan) };
}

function envelope(model: string) {
  return { id: `msg_sim${randomBytes(10).toString('hex')}`, type: 'message', role: 'assistant', model, stop_sequence: null };
}

export function messagesJson(body: Record<string, unknown>): string {
  const plan = planReply(messagesConversation(body));
  const content = blocksOf(plan).map((block) => block.final);
  const stop = plan.toolCall ? 'tool_use' : 'end_turn';
  return JSON.stringify({ ...envelope(String(body.model)), content, stop_reason: stop, usage: usageOf(plan) });
}

/** The SSE events of a Messages stream, each already framed. */
export function messagesEvents(body: Record<string, unknown>): string[] {
  const plan = planReply(messagesConversation(body));
  const usage = usageOf(plan);
  const events: string[] = [];
  const push = (type: string, data: Record<string, unknown>) => events.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  push('message_start', { message: { ...envelope(String(body.model)), content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } });
  blocksOf(plan).forEach((block, index) => {
    push('content_block_start', { index, content_block: block.start });
    if (index === 0) push('ping', {});
    for (const delta of block.deltas) push('content_block_delta', { index, delta });
    push('content_block_stop', { index });
  });
  push('message_delta', { delta: { stop_reason: plan.toolCall ? 'tool_use' : 'end_turn', stop_sequence: null }, usage });
  push('message_stop', {});
  return events;
}

/** Splits text into word-sized deltas (spaces kept), so streams have several events. */
export function words(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [text];
}
