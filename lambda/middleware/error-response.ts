import { toGatewayError } from '../errors.ts';
import { messagesErrorBody } from '../formats/messages/errors.ts';
import { responsesErrorBody } from '../formats/responses/errors.ts';
import { familyOfPath } from '../routes.ts';
import type { RequestState } from '../request-state.ts';
import type { GatewayMiddleware } from './types.ts';
import { identify } from '../handlers/dispatch.ts';

/**
 * Renders any error in the client's own format with its status. 5xx messages are generic
 * (GatewayError messages never carry internals); the cause goes to the log line only.
 */
export function errorResponse(): GatewayMiddleware {
  return {
    onError(request) {
      const error = toGatewayError(request.error);
      const state: RequestState = (request.context.gateway ??= {
        id: `req_${crypto.randomUUID().replaceAll('-', '')}`,
        startedAt: Date.now(),
        family: familyOfPath(request.event?.rawPath ?? ''),
        deadline: Date.now(),
        pending: [],
        release: [],
      });
      state.status = error.status;
      state.outcome = error.kind;
      if (error.status >= 500 && error.cause instanceof Error) state.cause = error.cause.message;
      const body = state.family === 'messages' ? messagesErrorBody(error, state.id) : responsesErrorBody(error);
      return identify(state, { statusCode: error.status, headers: { 'content-type': 'application/json', ...error.headers }, body });
    },
  };
}
