import * as z from 'zod/mini';

/**
 * What the gateway itself reads from a Responses request; everything else passes through.
 * `input` items are open: Codex sends many item types (`reasoning`, `custom_tool_call`,
 * `additional_tools`...) that only the upstream interprets.
 * @see docs/wire-formats.md §2.2
 * @see https://platform.openai.com/docs/api-reference/responses/create
 */
export const ResponsesRequest = z.looseObject({
  model: z.string().check(z.minLength(1)),
  input: z.union([z.string(), z.array(z.unknown())]),
  stream: z.optional(z.boolean()),
  max_output_tokens: z.optional(z.nullable(z.int().check(z.minimum(1)))),
});

export type ResponsesRequest = z.infer<typeof ResponsesRequest>;
