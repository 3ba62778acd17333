import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { startUpstream, type RecordedRequest, type UpstreamStub } from '../../support/upstream-stub.ts';
import { errorBody, hex, partialFrames, render, streamErrorFrames, type Answer } from './render.ts';
import { isRecord, readRequest, type Json, type WireFormat, type WireRequest } from './wire.ts';

/**
 * A programmable provider on 127.0.0.1 speaking one upstream format (Anthropic Messages, OpenAI
 * Responses or Chat Completions), streamed or not, as the request asks. A scenario scripts the
 * next answers as steps; every request and what was answered is kept for assertions.
 *
 * A step is taken by the next model request it accepts (`when`); a request it does not accept
 * gets the default answer and the step waits. With no step left the answer is plain text.
 */
export interface Step {
  when?: (request: WireRequest) => boolean;
  text?: string;
  /** Thinking (Messages, with a signature), reasoning (Responses, with encrypted_content) or reasoning_content (Chat). */
  thinking?: boolean;
  tool?: { name: string; input: string | Json };
  /** input tokens reported in usage (compaction needs a large number). */
  inputTokens?: number;
  error?: { status: number; retryAfter?: number; message?: string };
  /** Start streaming, then drop the connection mid-stream. */
  breakMidStream?: boolean;
  /** Start streaming, then fail inside the stream in the format's own way (render.ts streamErrorFrames; Bedrock: an exception frame). */
  streamError?: boolean;
}

export interface Exchange {
  n: number;
  at: number;
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Json | undefined;
  operation: 'create' | 'count_tokens' | 'other';
  request: WireRequest | undefined;
  /** The step that answered, or undefined for the default answer. */
  step: Step | undefined;
  status: number;
  /** What a successful answer carried (ids and signatures to look for later). */
  answer: Answer | undefined;
}

const PATHS: Record<WireFormat, { create: string; count?: string }> = {
  messages: { create: '/v1/messages', count: '/v1/messages/count_tokens' },
  responses: { create: '/v1/responses' },
  chat: { create: '/v1/chat/completions' },
};

export class ScriptedUpstream {
  readonly format: WireFormat;
  readonly exchanges: Exchange[] = [];
  protected queue: Step[] = [];
  /** The loopback server answering (a plain HTTP stub here; the Bedrock fake in ScriptedBedrock). */
  protected server: Pick<UpstreamStub, 'url' | 'close'> | undefined;
  protected counter = 0;

  constructor(format: WireFormat) {
    this.format = format;
  }

  get url(): string {
    if (!this.server) throw new Error('upstream not started');
    return this.server.url;
  }

  async start(): Promise<this> {
    this.server = await startUpstream((request, res) => this.answer(request, res));
    return this;
  }

  async close(): Promise<void> {
    await this.server?.close();
  }

  /** Forgets earlier requests and scripts the next answers. */
  script(...steps: Step[]): void {
    this.exchanges.length = 0;
    this.queue = [...steps];
  }

  /** Model requests (not count_tokens), in order. */
  creates(): (Exchange & { request: WireRequest })[] {
    return this.exchanges.filter((exchange): exchange is Exchange & { request: WireRequest } => exchange.operation === 'create' && exchange.request !== undefined);
  }

  pending(): number {
    return this.queue.length;
  }

  /** Keeps a request; a model request takes the next step if that step accepts it. */
  protected record(seen: Pick<Exchange, 'method' | 'url' | 'headers' | 'body' | 'operation' | 'request'>): Exchange {
    const exchange: Exchange = { ...seen, n: ++this.counter, at: Date.now(), step: undefined, status: 0, answer: undefined };
    this.exchanges.push(exchange);
    const head = this.queue[0];
    if (seen.operation === 'create' && seen.request && head && (!head.when || head.when(seen.request))) exchange.step = this.queue.shift();
    return exchange;
  }

  private answer(recorded: RecordedRequest, res: ServerResponse): void {
    const path = new URL(recorded.url, 'http://stub').pathname;
    let body: Json | undefined;
    try {
      const parsed: unknown = JSON.parse(recorded.body);
      body = isRecord(parsed) ? parsed : undefined;
    } catch {
      body = undefined;
    }
    const paths = PATHS[this.format];
    const operation = recorded.method === 'POST' && path === paths.create ? 'create' : recorded.method === 'POST' && path === paths.count ? 'count_tokens' : 'other';
    const exchange = this.record({ method: recorded.method, url: recorded.url, headers: recorded.headers, body, operation, request: body && operation !== 'other' ? readRequest(this.format, body) : undefined });

    if (operation === 'other' || !exchange.request) {
      exchange.status = 404;
      return send(res, 404, { 'content-type': 'application/json' }, JSON.stringify(errorBody(this.format, 404, `stub: no route for ${recorded.method} ${path}`)));
    }
    if (operation === 'count_tokens') {
      exchange.status = 200;
      return send(res, 200, { 'content-type': 'application/json' }, JSON.stringify({ input_tokens: Math.max(1, Math.ceil(recorded.body.length / 4)) }));
    }
    const request = exchange.request;
    const step = exchange.step;

    if (step?.error) {
      const { status, retryAfter, message } = step.error;
      exchange.status = status;
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
      return send(res, status, headers, JSON.stringify(errorBody(this.format, status, message ?? `stub ${status}`)));
    }
    if (step?.breakMidStream) {
      exchange.status = 200;
      if (!request.stream) {
        res.socket?.destroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'request-id': `req_stub_${hex(6)}` });
      for (const frame of partialFrames(this.format, request)) res.write(frame);
      // Let the frames leave before the connection drops, as a provider failing mid-answer would.
      setTimeout(() => res.socket?.destroy(), 50);
      return;
    }

    if (step?.streamError && request.stream) {
      exchange.status = 200;
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'request-id': `req_stub_${hex(6)}` });
      for (const frame of streamErrorFrames(this.format, request, 'stub failure inside the stream')) res.write(frame);
      res.end();
      return;
    }

    const answer = this.plan(request, step);
    exchange.answer = answer;
    exchange.status = 200;
    const rendered = render(this.format, request, answer);
    const headers = { ...rendered.headers, 'request-id': `req_stub_${hex(6)}` };
    if (rendered.frames) {
      res.writeHead(200, headers);
      for (const frame of rendered.frames) res.write(frame);
      res.end();
    } else send(res, 200, headers, rendered.json ?? '');
  }

  protected plan(request: WireRequest, step: Step | undefined): Answer {
    const n = this.counter;
    const thinking = step?.thinking ? { text: `Stub reasoning ${n}: I should answer briefly.`, signature: this.format === 'responses' ? `gAAAAA-stub-encrypted-${hex()}` : `stub-signature-${hex()}` } : undefined;
    const toolCall = step?.tool ? { id: this.format === 'messages' ? `toolu_${hex()}` : `call_${hex()}`, name: step.tool.name, input: step.tool.input } : undefined;
    let text = step?.text;
    if (text === undefined && !toolCall) text = request.outputSchema !== undefined ? JSON.stringify(sampleFor(request.outputSchema)) : `Hello from the ${this.format} stub.`;
    return { thinking, text, toolCall, usage: { input: step?.inputTokens ?? 25, output: 7 } };
  }
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: string): void {
  res.writeHead(status, { 'request-id': `req_stub_${hex(6)}`, ...headers, 'content-length': String(Buffer.byteLength(body)) });
  res.end(body);
}

/** A small value satisfying a JSON schema's required fields (for structured-output requests). */
export function sampleFor(schema: unknown): unknown {
  if (!isRecord(schema)) return {};
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  switch (schema.type) {
    case 'string':
      return 'Conformance check';
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    default: {
      const properties = isRecord(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? schema.required.filter((key): key is string => typeof key === 'string') : Object.keys(properties);
      return Object.fromEntries(required.map((key) => [key, sampleFor(properties[key])]));
    }
  }
}
