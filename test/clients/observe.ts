import type { ClientsEnvironment } from './environment.ts';
import { UPSTREAM_SECRETS, type RouteSpec } from './routes.ts';
import type { TapExchange } from './tap.ts';
import { BEDROCK_CREDENTIALS, BEDROCK_REGION } from './upstream/scripted-bedrock.ts';
import type { Exchange, ScriptedUpstream } from './upstream/scripted-upstream.ts';
import { readRequest, type Item, type Json, type WireFormat, type WireRequest } from './upstream/wire.ts';

/** What a scenario looks at after a CLI run: the tap (client side), the stub (upstream side), the gateway log. */

export function stubOf(env: ClientsEnvironment, route: RouteSpec): ScriptedUpstream | undefined {
  return route.stub ? env.stubs[route.stub] : undefined;
}

/** POSTs the client made to a path (query string ignored), in order. */
export function tapPosts(env: ClientsEnvironment, path: string): TapExchange[] {
  return env.tap.exchanges.filter((exchange) => exchange.method === 'POST' && exchange.url.split('?')[0] === path);
}

/** The client's model requests as seen by the tap, read in the client's format. */
export function clientRequests(env: ClientsEnvironment, format: WireFormat, path: string): (WireRequest & { exchange: TapExchange; body: Json })[] {
  return tapPosts(env, path).map((exchange) => {
    const body = JSON.parse(exchange.body) as Json;
    return { ...readRequest(format, body), exchange, body };
  });
}

export function reasoningItems(request: WireRequest): Extract<Item, { type: 'reasoning' }>[] {
  return request.items.filter((item): item is Extract<Item, { type: 'reasoning' }> => item.type === 'reasoning');
}

export function toolResults(request: WireRequest): Extract<Item, { type: 'tool_result' }>[] {
  return request.items.filter((item): item is Extract<Item, { type: 'tool_result' }> => item.type === 'tool_result');
}

export function toolCalls(request: WireRequest): Extract<Item, { type: 'tool_call' }>[] {
  return request.items.filter((item): item is Extract<Item, { type: 'tool_call' }> => item.type === 'tool_call');
}

/** Log lines for a model (the gateway writes one per request once its body has ended). */
export function logsFor(env: ClientsEnvironment, model: string): Json[] {
  return env.gatewayLogs().filter((line) => line.model === model);
}

/** Every header value an upstream saw, to check the gateway key never reaches it. */
function upstreamHeaderText(stub: ScriptedUpstream): string {
  return stub.exchanges.map((exchange) => JSON.stringify(exchange.headers)).join('\n');
}

/**
 * How the upstream authenticated the gateway: its API key, or (Bedrock) a SigV4 signature over
 * the gateway's own AWS credentials, which the fake verified before answering. Never the
 * client's key.
 */
function upstreamCredential(route: RouteSpec, exchange: Exchange): string | undefined {
  if (route.stub === 'anthropic') return String(exchange.headers['x-api-key']);
  if (route.stub !== 'bedrock') return exchange.headers.authorization;
  const signature = new RegExp(`^AWS4-HMAC-SHA256 Credential=${BEDROCK_CREDENTIALS.accessKeyId}/\\d{8}/${BEDROCK_REGION}/bedrock/aws4_request, SignedHeaders=[^ ]+, Signature=[0-9a-f]{64}$`);
  const signed = signature.test(String(exchange.headers.authorization)) && exchange.headers['x-amz-security-token'] === BEDROCK_CREDENTIALS.sessionToken;
  return signed && exchange.headers['x-api-key'] === undefined ? 'sigv4' : `unexpected: ${JSON.stringify(exchange.headers)}`;
}

/** The gateway key must never reach an upstream; the upstream's own credential must. */
export function expectUpstreamCredentials(env: ClientsEnvironment, route: RouteSpec): void {
  const stub = stubOf(env, route);
  if (!stub) return;
  expect(upstreamHeaderText(stub)).not.toContain(env.issued.key);
  const expected = { anthropic: UPSTREAM_SECRETS.STUB_ANTHROPIC_KEY, openai: `Bearer ${UPSTREAM_SECRETS.STUB_OPENAI_KEY}`, chat: undefined, bedrock: 'sigv4' }[route.stub!];
  for (const exchange of stub.exchanges) expect(upstreamCredential(route, exchange)).toBe(expected);
}

/**
 * What Claude Code sent, as Bedrock got it: every beta either in the body's anthropic_beta or
 * named in x-gateway-dropped, the same for metadata, and none of Bedrock's own invocation
 * metrics in the stream Claude Code got. (The fake refused the body had it kept model or stream.)
 */
export function expectBedrockRewrite(post: TapExchange, upstreamBody: Json): void {
  const sent = JSON.parse(post.body) as Json;
  const betas = String(post.headers['anthropic-beta'] ?? '').split(',').map((beta) => beta.trim()).filter(Boolean);
  expect(betas.length).toBeGreaterThan(0);
  const passed = (upstreamBody.anthropic_beta ?? []) as string[];
  const dropped = String(post.responseHeaders['x-gateway-dropped'] ?? '').split(', ');
  // Bedrock knows the advanced tool use beta by its earlier name.
  const onBedrock = (beta: string) => (beta === 'advanced-tool-use-2025-11-20' ? 'tool-search-tool-2025-10-19' : beta);
  for (const beta of betas) if (!passed.includes(onBedrock(beta))) expect({ beta, dropped }).toEqual({ beta, dropped: expect.arrayContaining([`anthropic-beta ${beta}`]) });
  expect(passed.every((beta) => betas.map(onBedrock).includes(beta))).toBe(true);
  expect(upstreamBody.anthropic_version).toBe('bedrock-2023-05-31');
  if ('metadata' in sent) expect(dropped).toContain('metadata');
  expect(upstreamBody.system).toEqual(sent.system);
  expect(post.response).not.toContain('invocationMetrics');
}

/** A short description of a CLI run for failure messages. */
export function describeRun(run: { code: number | null; signal: string | null; durationMs: number; timedOut: boolean; stdout: string; stderr: string }): string {
  return `exit ${run.code ?? run.signal} after ${run.durationMs} ms${run.timedOut ? ' (TIMED OUT)' : ''}\n--- stdout (end)\n${run.stdout.slice(-1500)}\n--- stderr (end)\n${run.stderr.slice(-1500)}`;
}
