import type * as z from 'zod/mini';
import type { Settings } from '../config/settings.ts';
import { globToRegExp, matchesAny } from '../config/glob.ts';
import { GatewayError } from '../errors.ts';
import { CountTokensRequest, MessagesRequest } from '../formats/messages/schema.ts';
import { ResponsesRequest } from '../formats/responses/schema.ts';
import { validateBody } from '../formats/validation.ts';
import { isRecord } from '../observability/usage.ts';
import type { RouteName } from '../routes.ts';
import { stateOf } from '../request-state.ts';
import type { GatewayMiddleware } from './types.ts';

const SCHEMAS: Partial<Record<RouteName, z.ZodMiniType>> = {
  messages: MessagesRequest,
  count_tokens: CountTokensRequest,
  responses: ResponsesRequest,
};

/**
 * Reads and validates the JSON body of POST routes, then checks the key's model allowlist.
 * Only the fields the gateway reads are validated; the raw text is kept for passthrough.
 */
export function parseBody(settings: Settings): GatewayMiddleware {
  return {
    before(request) {
      const state = stateOf(request.context);
      const schema = state.route && SCHEMAS[state.route.name];
      if (!schema) return;
      const { headers, body = '', isBase64Encoded } = request.event;
      const type = headers['content-type'];
      if (type !== undefined && !/^application\/(.+\+)?json\s*(;|$)/i.test(type)) {
        throw new GatewayError('unsupported_media_type', `Content-Type must be application/json, got "${type}".`);
      }
      // UTF-8 takes at most 3 bytes per UTF-16 unit: measure exactly only near the limit.
      const size = isBase64Encoded ? Math.floor((body.length * 3) / 4) : body.length * 3 <= settings.maxBodyBytes ? body.length : Buffer.byteLength(body);
      if (size > settings.maxBodyBytes) {
        throw new GatewayError('request_too_large', `Request body is ${size} bytes; the limit is ${settings.maxBodyBytes} bytes.`);
      }
      const text = isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body;
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        throw new GatewayError('invalid_request', `Request body is not valid JSON: ${(error as Error).message}`);
      }
      if (!isRecord(parsed)) throw new GatewayError('invalid_request', 'Request body must be a JSON object.');
      validateBody(schema, parsed);
      state.rawBody = text;
      state.body = parsed;
      state.model = parsed.model as string;
      const allowed = state.key?.models;
      if (allowed !== undefined && !matchesAny(allowed.map(globToRegExp), state.model)) {
        throw new GatewayError('permission', `This API key may not use model "${state.model}".`, { param: 'model' });
      }
    },
  };
}
