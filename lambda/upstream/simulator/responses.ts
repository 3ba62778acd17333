import { randomBytes } from 'node:crypto';
import { isRecord } from '../../observability/usage.ts';
import { contentText, lastText, outputTokens, planReply, type Conversation, type OfferedTool, type SimulatorPlan } from './plan.ts';
import { words } from './messages.ts';

const OUTPUT_TYPES = new Set(['function_call_output', 'custom_tool_call_output']);

/**
 * Reads what the simulator needs from a Responses request: tools from `tools` and from Codex's
 * `additional_tools` input items (its default models' "lite" shape), namespaces flattened, freeform
 * `custom` tools included.
 */
export function responsesConversation(body: Record<string, unknown>): Conversation {
  const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : Array.isArray(body.input) ? body.input.filter(isRecord) : [];
  // Codex sends instructions as `developer` messages (and tool lists as developer items), sometimes after the user's turn.
  const last = input.filter((item) => item.role !== 'developer' && item.role !== 'system').at(-1);
  const tools = offeredTools([body.tools, ...input.filter((item) => item.type === 'additional_tools').map((item) => item.tools)]);
  const format = isRecord(body.text) && isRecord(body.text.format) && body.text.format.type === 'json_schema' ? body.text.format.schema : undefined;
  const output = last && OUTPUT_TYPES.has(String(last.type)) ? last.output : undefined;
  const choice = body.tool_choice;
  return {
    lastUserText: last?.role === 'user' ? lastText(last.content) : '',
    lastToolResult: output === undefined ? undefined : contentText(output) || '(empty)',
    tools,
    forcedTool: choice === 'required' ? '*' : isRecord(choice) && typeof choice.name === 'string' ? choice.name : undefined,
    // `reasoning: {effort, summary, context}`; effort "none" asks for none.
    wantsThinking: isRecord(body.reasoning) && body.reasoning.effort !== 'none',
    outputSchema: format,
    promptParts: [body.instructions, body.input, body.tools],
  };
}

function offeredTools(lists: unknown[], namespace?: string): OfferedTool[] {
  return lists.flatMap((list) =>
    (Array.isArray(list) ? list.filter(isRecord) : []).flatMap((tool): OfferedTool[] => {
      if (typeof tool.name !== 'string') return [];
      if (tool.type === 'namespace') return offeredTools([tool.tools], tool.name);
      if (tool.type !== 'function' && tool.type !== 'custom') return [];
      const offered: OfferedTool = { name: tool.name, schema: tool.parameters, custom: tool.type === 'custom' };
      if (namespace) offered.namespace = namespace;
      if (typeof tool.description === 'string') offered.description = tool.description;
      return [offered];
    }),
  );
}

const id = (prefix: string) => `${prefix}_sim${randomBytes(10).toString('hex')}`;

function outputItems(plan: SimulatorPlan, includeEncrypted: boolean): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [];
  if (plan.thinking !== undefined) {
    const item: Record<string, unknown> = { id: id('rs'), type: 'reasoning', summary: [{ type: 'summary_text', text: plan.thinking }] };
    if (includeEncrypted) item.encrypted_content = Buffer.from(`simulator:${plan.thinking}`).toString('base64');
    items.push(item);
  }
  if (plan.text !== undefined) {
    items.push({ id: id('msg'), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: plan.text, annotations: [], logprobs: [] }] });
  }
  if (plan.toolCall !== undefined) {
    const { name, namespace, input, custom } = plan.toolCall;
    const space = namespace ? { namespace } : {};
    items.push(
      custom
        ? { id: id('ctc'), type: 'custom_tool_call', status: 'completed', call_id: id('call'), name, ...space, input: String(input) }
        : { id: id('fc'), type: 'function_call', status: 'completed', call_id: id('call'), name, ...space, arguments: JSON.stringify(input) },
    );
  }
  return items;
}

function responseObject(body: Record<string, unknown>, status: string, output: unknown[], usage: unknown) {
  return {
    id: id('resp'),
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: body.model,
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    store: body.store ?? false,
    tool_choice: body.tool_choice ?? 'auto',
    tools: [],
    usage,
  };
}

function usageOf(plan: SimulatorPlan) {
  const output = outputTokens(plan);
  return {
    input_tokens: plan.inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: plan.thinking === undefined ? 0 : Math.ceil(plan.thinking.length / 4) },
    total_tokens: plan.inputTokens + output,
  };
}

const wantsEncrypted = (body: Record<string, unknown>) => Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content');

export function responsesJson(body: Record<string, unknown>): string {
  const plan = planReply(responsesConversation(body));
  return JSON.stringify(responseObject(body, 'completed', outputItems(plan, wantsEncrypted(body)), usageOf(plan)));
}

/** The SSE events of a Responses stream, each already framed. */
export function responsesEvents(body: Record<string, unknown>): string[] {
  const plan = planReply(responsesConversation(body));
  const items = outputItems(plan, wantsEncrypted(body));
  const events: string[] = [];
  const push = (type: string, data: Record<string, unknown>) =>
    events.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: events.length, ...data })}\n\n`);
  const started = responseObject(body, 'in_progress', [], null);
  push('response.created', { response: started });
  push('response.in_progress', { response: started });
  items.forEach((item, output_index) => {
    const item_id = item.id;
    if (item.type === 'reasoning') {
      const text = (item.summary as { text: string }[])[0]?.text ?? '';
      push('response.output_item.added', { output_index, item: { ...item, summary: [], encrypted_content: null } });
      push('response.reasoning_summary_part.added', { item_id, output_index, summary_index: 0, part: { type: 'summary_text', text: '' } });
      push('response.reasoning_summary_text.delta', { item_id, output_index, summary_index: 0, delta: text });
      push('response.reasoning_summary_text.done', { item_id, output_index, summary_index: 0, text });
      push('response.reasoning_summary_part.done', { item_id, output_index, summary_index: 0, part: { type: 'summary_text', text } });
    } else if (item.type === 'message') {
      const text = plan.text ?? '';
      const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
      push('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      push('response.content_part.added', { item_id, output_index, content_index: 0, part });
      for (const delta of words(text)) push('response.output_text.delta', { item_id, output_index, content_index: 0, delta, logprobs: [] });
      push('response.output_text.done', { item_id, output_index, content_index: 0, text, logprobs: [] });
      push('response.content_part.done', { item_id, output_index, content_index: 0, part: { ...part, text } });
    } else if (item.type === 'function_call') {
      push('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      push('response.function_call_arguments.delta', { item_id, output_index, delta: item.arguments });
      push('response.function_call_arguments.done', { item_id, output_index, name: item.name, arguments: item.arguments });
    } else {
      push('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', input: '' } });
      push('response.custom_tool_call_input.delta', { item_id, output_index, delta: item.input });
      push('response.custom_tool_call_input.done', { item_id, output_index, input: item.input });
    }
    push('response.output_item.done', { output_index, item });
  });
  push('response.completed', { response: { ...started, status: 'completed', output: items, usage: usageOf(plan) } });
  return events;
}
