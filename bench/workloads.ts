/**
 * What the benchmark sends: the client-side paths (a client format routed to an upstream type),
 * the gateway's routing config for them, and the request bytes.
 *
 * Every path is listed once here. Passthrough paths are measured today; translated paths are
 * probed in every run and measured as soon as the gateway answers them (today it says 501),
 * so adding translation needs no benchmark change.
 */
export type ClientFamily = 'messages' | 'responses';
export type PathKind = 'passthrough' | 'translated';

export interface BenchPath {
  id: string;
  label: string;
  kind: PathKind;
  family: ClientFamily;
  /** Model names `<prefix>-e<deltas>-g<gapMs>` route this path (see stub-server.ts). */
  modelPrefix: string;
}

export const PATHS: readonly BenchPath[] = [
  { id: 'messages', label: 'Messages -> anthropic', kind: 'passthrough', family: 'messages', modelPrefix: 'claude-bench' },
  { id: 'responses', label: 'Responses -> openai', kind: 'passthrough', family: 'responses', modelPrefix: 'gpt-bench' },
  { id: 'messages-to-responses', label: 'Messages -> openai', kind: 'translated', family: 'messages', modelPrefix: 'xlate-openai' },
  { id: 'messages-to-chat', label: 'Messages -> openai-chat', kind: 'translated', family: 'messages', modelPrefix: 'xlate-chat' },
  { id: 'responses-to-messages', label: 'Responses -> anthropic', kind: 'translated', family: 'responses', modelPrefix: 'xlate-anthropic' },
  { id: 'responses-to-chat', label: 'Responses -> openai-chat', kind: 'translated', family: 'responses', modelPrefix: 'xlate-chat' },
];

export const PASSTHROUGH = PATHS.filter((path) => path.kind === 'passthrough');

/** The gateway's routing config: one upstream per provider type, all pointing at the stub. */
export function benchRoutingConfig(stubUrl: string): unknown {
  return {
    upstreams: {
      'stub-anthropic': { type: 'anthropic', baseUrl: stubUrl },
      'stub-openai': { type: 'openai', baseUrl: `${stubUrl}/v1` },
      'stub-chat': { type: 'openai-chat', baseUrl: `${stubUrl}/v1` },
    },
    // The stub's made-up model names have no price: metered at the fallback price, as before routes refused them.
    routes: [
      { model: 'claude-bench-*', upstream: 'stub-anthropic', allowUnpriced: true },
      { model: 'gpt-bench-*', upstream: 'stub-openai', allowUnpriced: true },
      { model: 'xlate-anthropic-*', upstream: 'stub-anthropic', allowUnpriced: true },
      { model: 'xlate-openai-*', upstream: 'stub-openai', allowUnpriced: true },
      { model: 'xlate-chat-*', upstream: 'stub-chat', allowUnpriced: true },
    ],
  };
}

export interface StreamShape {
  deltas: number;
  gapMs: number;
}

/** Text deltas plus the framing events each format sends around them (see stub-formats.ts). */
export function eventsPerStream(path: BenchPath, shape: StreamShape): number {
  return shape.deltas + (path.family === 'messages' ? 6 : 8);
}

export function modelName(path: BenchPath, shape: StreamShape): string {
  return `${path.modelPrefix}-e${shape.deltas}-g${shape.gapMs}`;
}

// A short coding-agent turn (about 1.3 KB): a system prompt, one earlier exchange, a question.
const SYSTEM = 'You are a careful coding assistant. Answer briefly, show code only when asked, and say when you are unsure. '.repeat(3);
const TURNS = [
  { role: 'user', content: 'What does the function parseRoutingConfig in lambda/config/routing.ts return when the config is invalid?' },
  { role: 'assistant', content: 'It throws an Error whose message lists one line per problem, each naming the field at fault.' },
  { role: 'user', content: 'And how do I add a route that renames the model on the way to the upstream? Give me the JSON.' },
];

export function requestBody(path: BenchPath, shape: StreamShape, stream: boolean): string {
  const model = modelName(path, shape);
  if (path.family === 'messages') {
    return JSON.stringify({ model, max_tokens: 1024, system: SYSTEM, messages: TURNS, stream });
  }
  return JSON.stringify({ model, instructions: SYSTEM, input: TURNS.map((turn) => ({ type: 'message', ...turn })), max_output_tokens: 1024, stream });
}

/** The HTTP target of a request: through the gateway, or straight to the stub (same format). */
export type Target = 'direct' | 'gateway';

export function requestPath(path: BenchPath, target: Target): string {
  if (target === 'gateway') return path.family === 'messages' ? '/first/v1/messages' : '/second/v1/responses';
  return path.family === 'messages' ? '/v1/messages' : '/v1/responses';
}

/** Client headers as the official SDKs send them (the key is the gateway's; the stub ignores it). */
export function requestHeaders(path: BenchPath, key: string): Record<string, string> {
  const common = { 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'gateway-bench/1' };
  return path.family === 'messages'
    ? { ...common, 'x-api-key': key, 'anthropic-version': '2023-06-01' }
    : { ...common, authorization: `Bearer ${key}` };
}
