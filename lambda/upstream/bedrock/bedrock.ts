import type { Upstream } from '../../config/routing.ts';
import { GatewayError, printable } from '../../errors.ts';
import { signAwsRequest } from '../../aws/signer.ts';
import type { Operation, OutgoingBody, ProviderRequest } from '../providers.ts';
import { bedrockErrorResponse } from './errors.ts';
import { eventStreamToSse } from './event-stream.ts';
import { toInvokeBody } from './invoke-body.ts';

/**
 * Amazon Bedrock's InvokeModel for Claude, as a provider: requests are rewritten and signed
 * here, and answers come back shaped as the Anthropic API's (SSE streams, Messages JSON,
 * Anthropic error envelopes), so the rest of the gateway serves a `bedrock` upstream exactly as
 * an `anthropic` one. Facts and sources: docs/bedrock.md.
 */

/**
 * Bedrock's model identifiers, as InvokeModel takes them in its path
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html, `modelId`):
 * a foundation-model id (`anthropic.claude-haiku-4-5-20251001-v1:0`), a system inference profile
 * id (`us.` + a foundation-model id), or the ARN of a foundation model, an inference profile, an
 * application inference profile, a provisioned model, a custom model (deployment) or an imported
 * model. Dot-separated parts are never empty, so no id can be `.` or `..` (a path segment that
 * would leave `/model/{id}/`), and nothing else a client sends on a route that passes its model
 * name through is signed and sent.
 */
const MODEL_ID = /^[a-z0-9-]{1,63}(\.[a-z0-9-]{1,63}){1,4}(:[a-z0-9-]{1,63}){0,2}$/;
const MODEL_ARN = /^arn:aws(-[a-z]+)*:bedrock:[a-z0-9-]{1,20}:(\d{12})?:(foundation-model|inference-profile|application-inference-profile|provisioned-model|custom-model|custom-model-deployment|imported-model)\/[a-zA-Z0-9][a-zA-Z0-9-.:/]{0,1023}$/;

export function isBedrockModelId(modelId: string): boolean {
  return MODEL_ID.test(modelId) || (MODEL_ARN.test(modelId) && !modelId.split(/[/:]/).some((part) => part === '.' || part === '..'));
}

/** Only a bare foundation-model id can count tokens (a `us.`/`global.` profile or an ARN gets ValidationException). */
export function countsTokens(modelId: string): boolean {
  return /^anthropic\.[^/:]+(:\d+)?$/.test(modelId);
}

export async function bedrockRequest(
  upstream: Upstream,
  operation: Operation,
  modelId: string,
  clientBody: OutgoingBody,
  streaming: boolean,
  clientHeaders: Record<string, string | undefined>,
  apiKey: string | undefined,
): Promise<ProviderRequest> {
  if (!isBedrockModelId(modelId)) {
    throw new GatewayError('invalid_request', `"${printable(modelId, 120)}" is not an Amazon Bedrock model id: ask for a model this gateway routes to Bedrock (a foundation-model or inference-profile id, or a model ARN).`, { param: 'model' });
  }
  const invoke = toInvokeBody(clientBody.text, clientBody.parsed, clientHeaders['anthropic-beta']);
  const action = operation === 'count_tokens' ? 'count-tokens' : streaming ? 'invoke-with-response-stream' : 'invoke';
  // The model id is one path segment: `:` in `...-v1:0` and `/` in profile ARNs are encoded.
  const url = `${upstream.baseUrl}/model/${encodeURIComponent(modelId)}/${action}`;
  const body = operation === 'count_tokens' ? JSON.stringify({ input: { invokeModel: { body: Buffer.from(invoke.body).toString('base64') } } }) : invoke.body;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: action === 'invoke-with-response-stream' ? 'application/vnd.amazon.eventstream' : 'application/json' };
  // A Bedrock API key is a bearer token; otherwise the request is signed with the AWS credential chain.
  if (apiKey !== undefined) headers.authorization = `Bearer ${apiKey}`;
  else if (upstream.aws !== undefined) Object.assign(headers, await signAwsRequest(upstream.aws, { method: 'POST', url, headers, body }));
  return { url, headers, body, dropped: operation === 'count_tokens' ? [] : invoke.dropped };
}

/** Bedrock's answer as the Anthropic API's. */
export async function adaptBedrockResponse(response: Response, operation: Operation): Promise<Response> {
  if (!response.ok) return bedrockErrorResponse(response.status, response.headers, await response.text().catch(() => ''));
  const requestId = response.headers.get('x-amzn-requestid');
  const headers = new Headers(requestId === null ? {} : { 'request-id': requestId });
  if (response.headers.get('content-type')?.includes('vnd.amazon.eventstream') && response.body) {
    headers.set('content-type', 'text/event-stream; charset=utf-8');
    return new Response(eventStreamToSse(response.body), { status: 200, headers });
  }
  headers.set('content-type', 'application/json');
  if (operation === 'count_tokens') {
    const answer = (await response.json()) as { inputTokens?: number };
    return new Response(JSON.stringify({ input_tokens: answer.inputTokens ?? 0 }), { status: 200, headers });
  }
  return new Response(response.body, { status: 200, headers });
}
