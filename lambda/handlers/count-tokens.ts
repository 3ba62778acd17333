import type { HandlerResponse } from '../deps.ts';
import type { RequestState } from '../request-state.ts';
import { estimateTokens } from '../formats/token-estimate.ts';

/**
 * Token counts for upstreams that cannot count (`count_tokens` off Anthropic, `input_tokens` off
 * OpenAI): a local estimate (see token-estimate.ts for why it errs high), in the client's format.
 * The response says so in `x-token-count: estimated`.
 */
export function countTokensLocally(state: RequestState): HandlerResponse {
  const body = state.body ?? {};
  const parts = state.family === 'messages' ? [body.system, body.messages, body.tools, body.tool_choice] : [body.instructions, body.input, body.tools, body.tool_choice];
  const inputTokens = estimateTokens(parts);
  state.status = 200;
  const answer = state.family === 'messages' ? { input_tokens: inputTokens } : { object: 'response.input_tokens', input_tokens: inputTokens };
  return {
    statusCode: 200,
    headers: { 'content-type': 'application/json', 'x-token-count': 'estimated' },
    body: JSON.stringify(answer),
  };
}
