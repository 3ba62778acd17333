import { toGatewayError } from '../errors.ts';
import { errorBody } from '../formats/error-body.ts';
import { oauthGatewayErrorBody } from '../formats/oauth/errors.ts';
import { speaksOAuth } from '../routes.ts';
import type { RequestState } from '../request-state.ts';
import type { GatewayMiddleware } from './types.ts';
import { identify } from '../handlers/dispatch.ts';
import { openRequestState } from './request-context.ts';

/**
 * Renders any error in the client's own format with its status. 5xx messages are generic
 * (GatewayError messages never carry internals); the cause goes to the log line only.
 */
export function errorResponse(): GatewayMiddleware {
  return {
    onError(request) {
      const error = toGatewayError(request.error);
      // A failure before the request context opened: the state is opened here, for the answer and the log line.
      const state: RequestState = (request.context.gateway ??= openRequestState(request.event, `req_${crypto.randomUUID().replaceAll('-', '')}`, Date.now()));
      state.status = error.status;
      // Whatever failed after the runtime abandoned the request failed because of that.
      state.outcome = state.abandon?.aborted ? String(state.abandon.reason) : error.kind;
      // A refused key may say why for the operator (a malformed key item); the client never sees it.
      if ((error.status >= 500 || error.kind === 'authentication') && error.cause instanceof Error) state.cause = error.cause.message;
      // The sign-in endpoints' clients read OAuth error bodies, whatever refused them.
      const body = speaksOAuth(request.event?.rawPath ?? '') ? oauthGatewayErrorBody(error) : errorBody(state.family, error, state.id);
      return identify(state, { statusCode: error.status, headers: { 'content-type': 'application/json', ...error.headers }, body });
    },
  };
}
