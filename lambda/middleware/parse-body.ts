import type * as z from 'zod/mini';
import type { Settings } from '../config/settings.ts';
import { globToRegExp, matchesAny } from '../config/glob.ts';
import { bodyTooLarge, GatewayError, printable } from '../errors.ts';
import { scanJsonShape } from '../formats/json-fields.ts';
import { CountTokensRequest, MessagesRequest } from '../formats/messages/schema.ts';
import { requestBodyText, tooManyBodies } from '../formats/request-body.ts';
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

/**
 * Values a body may hold (objects, arrays, members and elements). A long agent session with
 * dozens of tool schemas holds tens of thousands; parsing costs up to about 110 bytes of heap and
 * 0.2 µs per value whatever the text's size (an empty object in an array is 3 bytes of text), so
 * this bounds a body's parse at about 55 MB and 100 ms (docs/single-host.md, "Request bodies").
 */
export const MAX_JSON_VALUES = 500_000;

/**
 * What parsing and forwarding a body costs in memory, charged to the runtime's body budget before
 * it is spent: its strings twice (parsed, and the request sent upstream) and an object or slot per
 * value (measured up to about 110 bytes: an empty object in an array).
 */
function parseCost(text: string, values: number): number {
  return 2 * text.length + 128 * values;
}

/** Members that decide routing, streaming or limits: a second copy could be read differently upstream. */
const DECISIVE_MEMBERS: ReadonlySet<string> = new Set(['model', 'stream', 'max_tokens', 'max_output_tokens']);

/**
 * Reads and validates the JSON body of POST routes, then checks the model against the key's
 * allowlist and the person's policy (a key tied to a person gets both: their intersection).
 * Only the fields the gateway reads are validated; the raw text is kept for passthrough.
 * Hostile shapes are refused before anything walks them: compressed bodies are decoded with a
 * size cap, and nesting depth, the number of values and duplicated decisive members are checked
 * before parsing. On a runtime that budgets body memory (the local server: `bodyMemory`), the
 * decoded bytes and the parse's cost are charged to it before they are spent.
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
      const memory = request.context.bodyMemory;
      const text = await requestBodyText(body, isBase64Encoded, headers['content-encoding'], memory?.maxDecodedBytes ?? settings.maxBodyBytes, memory?.take);
      const shape = scanJsonShape(text, MAX_JSON_DEPTH, DECISIVE_MEMBERS, MAX_JSON_VALUES);
      if (shape.tooDeep) throw new GatewayError('invalid_request', `Request body nests deeper than ${MAX_JSON_DEPTH} levels.`);
      if (shape.tooManyValues) throw new GatewayError('request_too_large', `Request body holds more than ${MAX_JSON_VALUES} JSON values; the limit is ${MAX_JSON_VALUES}.`);
      if (shape.duplicate) throw new GatewayError('invalid_request', `Request body has "${shape.duplicate}" more than once.`, { param: shape.duplicate });
      if (memory !== undefined && !memory.take(parseCost(text, shape.values))) throw tooManyBodies();
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
