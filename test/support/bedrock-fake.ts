import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { crc32 } from 'node:zlib';
import { listen } from './gateway-harness.ts';
import { verifySignature } from './sigv4-verify.ts';

/**
 * A loopback Amazon Bedrock Runtime: InvokeModel, InvokeModelWithResponseStream (the binary
 * `application/vnd.amazon.eventstream`) and CountTokens. It verifies AWS SigV4 on every request
 * (or a Bedrock API key it was given) and refuses a bad or missing signature as Bedrock does. The signature check and the
 * event-stream encoder are written here from the AWS specifications with node:crypto and
 * node:zlib, independently of the gateway's code (which uses @smithy), so the two cannot agree on
 * a shared mistake; test/support/bedrock-fake.test.ts proves the fake against the official
 * @aws-sdk/client-bedrock-runtime and @anthropic-ai/bedrock-sdk.
 */
export const FAKE_CREDENTIALS = { accessKeyId: 'AKIAFAKEBEDROCK00001', secretAccessKey: 'fake-bedrock-secret-key/0123456789abcdef', sessionToken: 'fake-session-token' };

export type BedrockAnswer =
  /**
   * Anthropic Messages events (the JSON objects): streamed as chunks, or assembled as one Message
   * for /invoke; a stream may end with an exception frame, a corrupt frame, or the connection
   * dropped after the events.
   */
  | { events: Record<string, unknown>[]; exceptionAfter?: { type: string; message: string }; corruptAfter?: number; gapMs?: number; dropAfter?: boolean }
  /** A Bedrock error answer: exception name (e.g. ThrottlingException) and status. */
  | { error: { type: string; status: number; message: string; headers?: Record<string, string> } }
  | { json: unknown }
  /** The connection dropped before any answer. */
  | { drop: true };

export interface BedrockRequest {
  action: 'invoke' | 'invoke-with-response-stream' | 'count-tokens';
  modelId: string;
  rawPath: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
  rawBody: string;
}

export interface BedrockFake {
  url: string;
  region: string;
  requests: BedrockRequest[];
  /** The next answers, in order; with none left, a short text answer. */
  script(...answers: BedrockAnswer[]): void;
  /** Splits every binary stream into random pieces (seeded), to exercise decoders at any boundary. */
  chunking(seed: number | undefined): void;
  close(): Promise<void>;
}

export interface BedrockFakeOptions {
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string }[];
  /** Bedrock API keys it takes as `Authorization: Bearer` instead of a signature (https://docs.aws.amazon.com/bedrock/latest/userguide/api-keys.html). */
  apiKeys?: string[];
  /**
   * Answers each request (signature verified, body valid) instead of the script; undefined
   * falls back to the fake's own answer (the script, or its token count for CountTokens).
   */
  onRequest?: (request: BedrockRequest) => BedrockAnswer | undefined;
}

export async function startBedrockFake(options: BedrockFakeOptions = {}): Promise<BedrockFake> {
  const region = options.region ?? 'us-east-1';
  const secrets = new Map((options.credentials ?? [FAKE_CREDENTIALS]).map((credential) => [credential.accessKeyId, credential.secretAccessKey]));
  const apiKeys = new Set(options.apiKeys ?? []);
  const requests: BedrockRequest[] = [];
  let queue: BedrockAnswer[] = [];
  let seed: number | undefined;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const match = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream|count-tokens)$/.exec(req.url ?? '');
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const problem = bearer === undefined ? verifySignature(req, body, secrets, { region, service: 'bedrock' }) : apiKeys.has(bearer) ? undefined : { status: 403, type: 'UnrecognizedClientException', message: 'Invalid API Key format: Must start with pre-defined prefix' };
      if (problem) return sendError(res, problem.status, problem.type, problem.message);
      if (req.method !== 'POST' || !match) return sendError(res, 404, 'UnknownOperationException', 'Unknown operation');
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        return sendError(res, 400, 'ValidationException', 'Malformed input request, please reformat your input and try again.');
      }
      const request: BedrockRequest = { action: match[2] as BedrockRequest['action'], modelId: decodeURIComponent(match[1] as string), rawPath: req.url as string, headers: req.headers, body: parsed, rawBody: body.toString('utf8') };
      const invalid = invalidBody(request);
      if (invalid) return sendError(res, 400, 'ValidationException', invalid);
      requests.push(request);
      const hooked = options.onRequest?.(request);
      if (hooked === undefined && request.action === 'count-tokens') return sendJson(res, 200, { inputTokens: countTokens(parsed) });
      void answer(res, request, hooked ?? queue.shift() ?? { events: textEvents('Hello from the Bedrock fake.') }, seed);
    });
  });
  const url = await listen(server);
  return {
    url,
    region,
    requests,
    script: (...answers) => void (queue = answers),
    chunking: (value) => void (seed = value),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function answer(res: http.ServerResponse, request: BedrockRequest, scripted: BedrockAnswer, seed: number | undefined): Promise<void> {
  if ('drop' in scripted) return void res.socket?.destroy();
  if ('error' in scripted) return sendError(res, scripted.error.status, scripted.error.type, scripted.error.message, scripted.error.headers);
  if ('json' in scripted) return sendJson(res, 200, scripted.json);
  if (request.action === 'invoke') return sendJson(res, 200, assemble(scripted.events));
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': randomBytes(8).toString('hex') });
  const frames: Buffer[] = scripted.events.map((event) => eventFrame('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64'), p: 'x'.repeat(event.type === 'content_block_delta' ? 3 : 11) }));
  if (scripted.exceptionAfter) frames.push(exceptionFrame(scripted.exceptionAfter.type, scripted.exceptionAfter.message));
  if (scripted.corruptAfter !== undefined) {
    const broken = Buffer.from(frames[scripted.corruptAfter] as Buffer);
    broken[broken.length - 1] = (broken[broken.length - 1] as number) ^ 0xff;
    frames.splice(scripted.corruptAfter, frames.length - scripted.corruptAfter, broken);
  }
  const bytes = Buffer.concat(frames);
  const pieces = seed === undefined ? frames : randomPieces(bytes, seed);
  // dropAfter: the connection drops once the last piece has reached the socket (its write
  // callback), so every frame leaves first, as from a service failing mid-answer.
  const drop = () => res.socket?.destroy();
  for (const [index, piece] of pieces.entries()) {
    if (res.destroyed) return;
    res.write(piece, scripted.dropAfter && index === pieces.length - 1 ? drop : undefined);
    if (scripted.gapMs) await new Promise((resolve) => setTimeout(resolve, scripted.gapMs));
  }
  if (!scripted.dropAfter) res.end();
  else if (pieces.length === 0) drop();
}

/**
 * What Bedrock refuses in any InvokeModel body (or the one inside CountTokens), as documented
 * for Claude (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html):
 * `anthropic_version` is required (AWS documents bedrock-2023-05-31; @anthropic-ai/bedrock-sdk
 * sends its own API version date there, so any string is taken); the model is the path's, and
 * streaming the action's, so `model` and `stream` are not body members; `anthropic_beta` is a list.
 */
function invalidBody(request: BedrockRequest): string | undefined {
  const inner = request.action === 'count-tokens' ? (request.body.input as { invokeModel?: { body?: string } } | undefined)?.invokeModel?.body : undefined;
  let body = request.body;
  if (request.action === 'count-tokens') {
    try {
      body = JSON.parse(Buffer.from(inner ?? '', 'base64').toString('utf8'));
    } catch {
      return 'The provided request is not valid';
    }
  }
  if (typeof body.anthropic_version !== 'string') return 'Malformed input request: #: required key [anthropic_version] not found, please reformat your input and try again.';
  for (const member of ['model', 'stream']) if (member in body) return `extraneous key [${member}] is not permitted`;
  if ('anthropic_beta' in body && !(Array.isArray(body.anthropic_beta) && body.anthropic_beta.every((beta) => typeof beta === 'string'))) return 'anthropic_beta: Input should be a valid list';
  return undefined;
}

/** One event-stream message: prelude (lengths + CRC), string headers, payload, message CRC. */
export function encodeMessage(headers: Record<string, string>, payload: Buffer): Buffer {
  const headerBytes = Buffer.concat(
    Object.entries(headers).map(([name, value]) => {
      const nameBytes = Buffer.from(name);
      const valueBytes = Buffer.from(value);
      const length = Buffer.alloc(2);
      length.writeUInt16BE(valueBytes.length);
      return Buffer.concat([Buffer.from([nameBytes.length]), nameBytes, Buffer.from([7]), length, valueBytes]);
    }),
  );
  const total = 12 + headerBytes.length + payload.length + 4;
  const prelude = Buffer.alloc(8);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(headerBytes.length, 4);
  const preludeCrc = Buffer.alloc(4);
  preludeCrc.writeUInt32BE(crc32(prelude));
  const message = Buffer.concat([prelude, preludeCrc, headerBytes, payload]);
  const messageCrc = Buffer.alloc(4);
  messageCrc.writeUInt32BE(crc32(message));
  return Buffer.concat([message, messageCrc]);
}

function eventFrame(eventType: string, payload: unknown): Buffer {
  return encodeMessage({ ':event-type': eventType, ':content-type': 'application/json', ':message-type': 'event' }, Buffer.from(JSON.stringify(payload)));
}

function exceptionFrame(exceptionType: string, message: string): Buffer {
  return encodeMessage({ ':exception-type': exceptionType, ':content-type': 'application/json', ':message-type': 'exception' }, Buffer.from(JSON.stringify({ message })));
}

function sendError(res: http.ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': randomBytes(8).toString('hex'), ...headers });
  res.end(JSON.stringify({ message }));
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-requestid': randomBytes(8).toString('hex') });
  res.end(JSON.stringify(body));
}

/** About 4 characters per token of the InvokeModel body CountTokens was given. */
function countTokens(body: Record<string, unknown>): number {
  const invoke = (body.input as { invokeModel?: { body?: string } } | undefined)?.invokeModel?.body;
  return Math.ceil(Buffer.from(invoke ?? '', 'base64').length / 4);
}

/** The Message a stream of events adds up to (what /invoke answers). */
function assemble(events: Record<string, unknown>[]): Record<string, unknown> {
  const start = events.find((event) => event.type === 'message_start')?.message as Record<string, unknown>;
  const content: Record<string, unknown>[] = [];
  let usage = { ...(start?.usage as Record<string, unknown>) };
  let stop: Record<string, unknown> = {};
  for (const event of events) {
    if (event.type === 'content_block_start') content[event.index as number] = { ...(event.content_block as Record<string, unknown>) };
    if (event.type === 'content_block_delta') {
      const block = content[event.index as number] as Record<string, unknown>;
      const delta = event.delta as Record<string, string>;
      if (delta.type === 'text_delta') block.text = `${block.text ?? ''}${delta.text}`;
      if (delta.type === 'thinking_delta') block.thinking = `${block.thinking ?? ''}${delta.thinking}`;
      if (delta.type === 'signature_delta') block.signature = delta.signature;
      if (delta.type === 'input_json_delta') block.partial = `${block.partial ?? ''}${delta.partial_json}`;
    }
    if (event.type === 'content_block_stop') {
      const block = content[event.index as number] as Record<string, unknown>;
      if (block.type === 'tool_use') {
        block.input = JSON.parse((block.partial as string | undefined) || '{}');
        delete block.partial;
      }
    }
    if (event.type === 'message_delta') {
      stop = event.delta as Record<string, unknown>;
      usage = { ...usage, ...(event.usage as Record<string, unknown>) };
    }
  }
  return { ...start, content, ...stop, usage };
}

/** The Anthropic events of a plain text answer, as Bedrock's Claude streams them (with invocation metrics). */
export function textEvents(text: string, usage = { input_tokens: 12, output_tokens: 6 }): Record<string, unknown>[] {
  return [
    { type: 'message_start', message: { id: 'msg_bdrk_01Fake', type: 'message', role: 'assistant', model: 'claude-sonnet-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: usage.input_tokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: usage.output_tokens } },
    { type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: usage.input_tokens, outputTokenCount: usage.output_tokens, invocationLatency: 321, firstByteLatency: 123 } },
  ];
}

function randomPieces(bytes: Buffer, seed: number): Buffer[] {
  let state = seed >>> 0 || 1;
  const next = () => ((state = (state * 1664525 + 1013904223) >>> 0) / 2 ** 32);
  const pieces: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; ) {
    const size = 1 + Math.floor(next() * 40);
    pieces.push(bytes.subarray(offset, offset + size));
    offset += size;
  }
  return pieces;
}
