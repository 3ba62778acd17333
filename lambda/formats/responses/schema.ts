import * as z from 'zod/mini';
import { ModelName } from '../model-name.ts';

/**
 * What the gateway itself reads from a Responses request; everything else passes through.
 * `input` items are open: Codex sends many item types (`reasoning`, `custom_tool_call`,
 * `additional_tools`...) that only the upstream interprets.
 * @see docs/wire-formats.md §2.2
 * @see https://platform.openai.com/docs/api-reference/responses/create
 */
export const ResponsesRequest = z.looseObject({
  model: ModelName,
  input: z.union([z.string(), z.array(z.unknown())]),
  stream: z.optional(z.boolean()),
  max_output_tokens: z.optional(z.nullable(z.int().check(z.minimum(1)))),
});

/**
 * `POST /responses/input_tokens` and `/responses/compact` take a Responses request's fields;
 * the gateway reads only the model (to route) and the input (to estimate).
 */
export const ResponsesInputTokensRequest = z.looseObject({
  model: ModelName,
  input: z.optional(z.union([z.string(), z.array(z.unknown())])),
});

export type ResponsesRequest = z.infer<typeof ResponsesRequest>;
