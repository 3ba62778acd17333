import type { GatewayError } from '../errors.ts';
import type { Family } from '../routes.ts';
import { messagesErrorBody } from './messages/errors.ts';
import { responsesErrorBody } from './responses/errors.ts';

/** A gateway error as the JSON body of the client's own format. */
export function errorBody(family: Family, error: GatewayError, requestId: string): string {
  return family === 'messages' ? messagesErrorBody(error, requestId) : responsesErrorBody(error);
}
