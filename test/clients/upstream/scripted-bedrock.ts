import { FAKE_CREDENTIALS, startBedrockFake, type BedrockAnswer, type BedrockRequest } from '../../support/bedrock-fake.ts';
import { partialFrames, render } from './render.ts';
import { ScriptedUpstream } from './scripted-upstream.ts';
import { readRequest, type Json } from './wire.ts';

/**
 * The scripted upstream as Amazon Bedrock's InvokeModel: the loopback Bedrock fake
 * (test/support/bedrock-fake.ts: SigV4 verified against the gateway's credentials, the binary
 * event stream, CountTokens, Bedrock's refusals of a body it does not take) answering the same
 * steps as the other scripted upstreams, in Anthropic's Messages format wrapped as Bedrock wraps
 * it. The model id comes from the path and streaming from the action, so a request reads as a
 * Messages request for that model; an error step becomes Bedrock's exception for it.
 */
export const BEDROCK_REGION = 'us-east-1';

/** The gateway's AWS credentials for this upstream (its environment; the CLIs never see them). */
export const BEDROCK_CREDENTIALS = FAKE_CREDENTIALS;

/** Bedrock's exception for a scripted status (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html#API_runtime_InvokeModel_Errors). */
const EXCEPTIONS: Record<number, { type: string; status: number }> = {
  400: { type: 'ValidationException', status: 400 },
  403: { type: 'AccessDeniedException', status: 403 },
  404: { type: 'ResourceNotFoundException', status: 404 },
  429: { type: 'ThrottlingException', status: 429 },
  500: { type: 'InternalServerException', status: 500 },
  529: { type: 'ServiceUnavailableException', status: 503 },
};

export class ScriptedBedrock extends ScriptedUpstream {
  constructor() {
    super('messages');
  }

  override async start(): Promise<this> {
    this.server = await startBedrockFake({ region: BEDROCK_REGION, credentials: [BEDROCK_CREDENTIALS], onRequest: (request) => this.answerInvoke(request) });
    return this;
  }

  private answerInvoke(received: BedrockRequest): BedrockAnswer | undefined {
    const counting = received.action === 'count-tokens';
    const body = counting ? (JSON.parse(Buffer.from((received.body.input as { invokeModel: { body: string } }).invokeModel.body, 'base64').toString('utf8')) as Json) : received.body;
    const request = readRequest('messages', { ...body, model: received.modelId, stream: received.action === 'invoke-with-response-stream' });
    const exchange = this.record({ method: 'POST', url: received.rawPath, headers: received.headers, body, operation: counting ? 'count_tokens' : 'create', request });
    const step = exchange.step;
    if (counting) {
      exchange.status = 200;
      return undefined;
    }
    if (step?.error) {
      const exception = EXCEPTIONS[step.error.status] ?? { type: 'InternalServerException', status: 500 };
      exchange.status = exception.status;
      const headers: Record<string, string> = step.error.retryAfter === undefined ? {} : { 'retry-after': String(step.error.retryAfter) };
      return { error: { ...exception, message: step.error.message ?? `stub ${exception.type}`, headers } };
    }
    if (step?.breakMidStream) {
      exchange.status = 200;
      return request.stream ? { events: eventsOf(partialFrames('messages', request)), dropAfter: true } : { drop: true };
    }
    if (step?.streamError && request.stream) {
      exchange.status = 200;
      // The exception InvokeModelWithResponseStream documents for a failure mid-answer.
      return { events: eventsOf(partialFrames('messages', request)), exceptionAfter: { type: 'modelStreamErrorException', message: 'stub failure inside the stream' } };
    }
    const answer = this.plan(request, step);
    exchange.answer = answer;
    exchange.status = 200;
    const rendered = render('messages', request, answer);
    if (!rendered.frames) return { json: JSON.parse(rendered.json ?? '{}') };
    const events = eventsOf(rendered.frames);
    // Bedrock adds its invocation metrics to message_stop (the gateway must not pass them on).
    const stop = events.at(-1) as Json;
    stop['amazon-bedrock-invocationMetrics'] = { inputTokenCount: answer.usage.input, outputTokenCount: answer.usage.output, invocationLatency: 420, firstByteLatency: 120 };
    return { events };
  }
}

/** The Anthropic stream events (JSON) in SSE frames, as Bedrock wraps them one per chunk: Bedrock sends no pings. */
function eventsOf(frames: string[]): Json[] {
  return frames.map((frame) => JSON.parse(frame.slice(frame.indexOf('\ndata: ') + '\ndata: '.length)) as Json).filter((event) => event.type !== 'ping');
}
