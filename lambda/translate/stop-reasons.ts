import type { IrStopReason } from './ir.ts';

/** @see docs/wire-formats.md §4.6 */
const FROM_MESSAGES: Record<string, IrStopReason> = {
  end_turn: 'end_turn',
  max_tokens: 'max_tokens',
  stop_sequence: 'stop_sequence',
  tool_use: 'tool_use',
  refusal: 'refusal',
  pause_turn: 'pause_turn',
  model_context_window_exceeded: 'context_window',
};

export function stopFromMessages(reason: unknown): IrStopReason {
  return FROM_MESSAGES[String(reason)] ?? 'end_turn';
}

/** Messages clients: the IR reason is Anthropic's own vocabulary, except `context_window`. */
export function stopToMessages(reason: IrStopReason): string {
  return reason === 'context_window' ? 'model_context_window_exceeded' : reason;
}

/** Chat `finish_reason`; a `stop` with tool calls is a tool turn. */
export function stopFromChat(reason: unknown, sawToolCalls: boolean): IrStopReason {
  switch (reason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return sawToolCalls ? 'tool_use' : 'end_turn';
  }
}

/** Responses terminal status -> reason (a completed turn with tool calls is a tool turn). */
export function stopFromResponses(status: unknown, incompleteReason: unknown, sawToolCalls: boolean): IrStopReason {
  if (status === 'incomplete') return incompleteReason === 'content_filter' ? 'refusal' : 'max_tokens';
  return sawToolCalls ? 'tool_use' : 'end_turn';
}

/** Responses clients: which terminal event, and `incomplete_details` when not completed. */
export function stopToResponses(reason: IrStopReason): { status: 'completed' | 'incomplete'; incompleteReason?: string } {
  if (reason === 'max_tokens' || reason === 'context_window') return { status: 'incomplete', incompleteReason: 'max_output_tokens' };
  if (reason === 'refusal') return { status: 'incomplete', incompleteReason: 'content_filter' };
  return { status: 'completed' };
}
