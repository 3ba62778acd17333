import type * as z from 'zod/mini';
import type { Settings } from '../config/settings.ts';
import { globToRegExp, matchesAny } from '../config/glob.ts';
import { bodyTooLarge, GatewayError, printable } from '../errors.ts';
import { scanJsonShape } from '../formats/json-fields.ts';
import { CountTokensRequest, MessagesRequest } from '../formats/messages/schema.ts';
import { requestBodyText } from '../formats/request-body.ts';
import { ResponsesInputTokensRequest, ResponsesRequest } from '../formats/responses/schema.ts';
import { validateBody } from '../formats/validation.ts';
import { isRecord } from '../observability/usage.ts';
import type { RouteName } from '../routes.ts';
import { stateOf } from '../request-state.ts';
import type { GatewayMiddleware } from './types.ts';

const SCHEMAS: Partial<Record<RouteName, z.ZodMiniType>> = {
  messages: MessagesRequest,
  count_tokens: CountTokensRequest,
  responses: ResponsesRequest,
  responses_input_tokens: ResponsesInputTokensRequest,
  responses_compact: ResponsesInputTokensRequest,
};

/** Deeper than any real request (tool schemas nest a few dozen levels at most); far below what recursion can take. */
export const MAX_JSON_DEPTH = 128;

/** Members that decide routing, streaming or limits: a second copy could be read differently upstream. */
const DECISIVE_MEMBERS: ReadonlySet<string> = new Set(['model', 'stream', 'max_tokens', 'max_output_tokens']);

/**
 * Reads and validates the JSON body of POST routes, then checks the model against the key's
 * allowlist and the person's policy (a key tied to a person gets both: their intersection).
 * Only the fields the gateway reads are validated; the raw text is kept for passthrough.
 * Hostile shapes are refused before anything walks them: compressed bodies are decoded with a
 * size cap, and nesting depth and duplicated decisive members are checked before parsing.
 */
export function parseBody(settings: Settings): GatewayMiddleware {
  return {
    async before(request) {
      const state = stateOf(request.context);
      const schema = state.route && SCHEMAS[state.route.name];
      if (!schema) return;
      const { headers, body = '', isBase64Encoded } = request.event;
      const type = headers['content-type'];
      if (type !== undefined && !/^application\/(.+\+)?json\s*(;|$)/i.test(type)) {
        throw new GatewayError('unsupported_media_type', `Content-Type must be application/json, got "${printable(type)}".`);
      }
      // UTF-8 takes at most 3 bytes per UTF-16 unit: measure exactly only near the limit.
      const size = isBase64Encoded ? Math.floor((body.length * 3) / 4) : body.length * 3 <= settings.maxBodyBytes ? body.length : Buffer.byteLength(body);
      if (size > settings.maxBodyBytes) throw bodyTooLarge(size, settings.maxBodyBytes);
      const text = await requestBodyText(body, isBase64Encoded, headers['content-encoding'], settings.maxBodyBytes);
      const shape = scanJsonShape(text, MAX_JSON_DEPTH, DECISIVE_MEMBERS);
      if (shape.tooDeep) throw new GatewayError('invalid_request', `Request body nests deeper than ${MAX_JSON_DEPTH} levels.`);
      if (shape.duplicate) throw new GatewayError('invalid_request', `Request body has "${shape.duplicate}" more than once.`, { param: shape.duplicate });
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        // The parser's message may quote the input: keep it printable and short.
        throw new GatewayError('invalid_request', `Request body is not valid JSON: ${printable((error as Error).message, 120)}`);
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
      // The person's policy, on every route that names a model: the 400 Claude Code's gateway
      // protocol asks for a denied model (invalid_request_error; model_not_found in OpenAI's format).
      const policyModels = state.policy?.models;
      if (policyModels !== undefined && !matchesAny(policyModels.map(globToRegExp), state.model)) {
        throw new GatewayError('invalid_request', `Model "${printable(state.model, 200)}" is not allowed for you on this gateway; ask your gateway admin which models your groups may use.`, { param: 'model', code: 'model_not_found' });
      }
    },
  };
}
