import type { LambdaFunctionURLEvent } from 'aws-lambda';
import type { GatewayDeps, HandlerResponse } from '../deps.ts';
import { GatewayError } from '../errors.ts';
import type { RequestState } from '../request-state.ts';
import { forward } from './forward.ts';
import { listMessagesModels, listResponsesModels } from './models.ts';

/** Runs the route the middlewares resolved; every answer carries the request id. */
export async function dispatch(event: LambdaFunctionURLEvent, state: RequestState, deps: GatewayDeps): Promise<HandlerResponse> {
  return identify(state, await run(event, state, deps));
}

function run(event: LambdaFunctionURLEvent, state: RequestState, deps: GatewayDeps): HandlerResponse | Promise<HandlerResponse> {
  switch (state.route?.name) {
    case 'messages':
    case 'responses':
      return forward(state, deps, 'create', event.headers);
    case 'count_tokens':
      return forward(state, deps, 'count_tokens', event.headers);
    case 'responses_input_tokens':
      return forward(state, deps, 'input_tokens', event.headers);
    case 'responses_compact':
      return forward(state, deps, 'compact', event.headers);
    case 'messages_models':
      return listMessagesModels(deps.router, state);
    case 'responses_models':
      return listResponsesModels(deps.router, state, new URLSearchParams(event.rawQueryString ?? ''));
    case 'probe':
      return { statusCode: 200, headers: {}, body: '' };
    case 'identity':
      // Routed only when the door exists (requestContext resolves identity paths only then).
      if (!deps.identity) throw new GatewayError('not_found', 'No route.');
      return deps.identity.serve(event, state);
    case 'admin':
      if (!deps.admin) throw new GatewayError('not_found', 'No route.');
      return deps.admin.serve(event, state);
    case 'responses_websocket':
      // Codex falls back to HTTP streaming at once on a 426, but retries other statuses.
      if (event.headers.upgrade?.toLowerCase() === 'websocket') {
        throw new GatewayError('upgrade_required', 'WebSocket transport is not supported; use HTTP streaming (Codex: supports_websockets = false).');
      }
      throw new GatewayError('method_not_allowed', 'Use POST for /responses.', { headers: { allow: 'POST' } });
    case undefined:
      throw new GatewayError('not_found', 'No route.');
  }
}

/** Adds both request-id headers (Anthropic's SDK reads `request-id`, OpenAI's `x-request-id`). */
export function identify(state: RequestState, response: HandlerResponse): HandlerResponse {
  state.status ??= response.statusCode;
  if (state.answerHeaders) Object.assign(response.headers, state.answerHeaders);
  response.headers['request-id'] = state.id;
  response.headers['x-request-id'] = state.id;
  return response;
}
