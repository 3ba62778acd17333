import type { HandlerResponse } from '../deps.ts';
import type { RequestState } from '../request-state.ts';
import { estimateTokens } from '../formats/token-estimate.ts';

/**
 * `count_tokens` for upstreams that cannot count: a local estimate (see token-estimate.ts for
 * why it errs high). The response says so in `x-token-count: estimated`.
 */
export function countTokensLocally(state: RequestState): HandlerResponse {
  const body = state.body ?? {};
  const inputTokens = estimateTokens([body.system, body.messages, body.tools, body.tool_choice]);
  state.status = 200;
  return {
    statusCode: 200,
    headers: { 'content-type': 'application/json', 'x-token-count': 'estimated' },
    body: JSON.stringify({ input_tokens: inputTokens }),
  };
}
