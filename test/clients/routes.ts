import { BEDROCK_REGION } from './upstream/scripted-bedrock.ts';
import type { WireFormat } from './upstream/wire.ts';

/**
 * Cross-format routes (Claude Code via a Responses or Chat Completions upstream, Codex via an
 * Anthropic or Chat Completions upstream) go through lambda/translate/ and are run by default;
 * `CROSS_FORMAT_READY=0 npm run test:clients` reports them as pending instead (a quicker run).
 */
export const CROSS_FORMAT_READY: boolean = process.env.CROSS_FORMAT_READY === undefined ? true : process.env.CROSS_FORMAT_READY === '1';

export type Client = 'claude-code' | 'codex';
export type RouteId = 'anthropic' | 'openai' | 'openai-chat' | 'bedrock' | 'simulator';
export type StubName = 'anthropic' | 'openai' | 'chat' | 'bedrock';

export interface RouteSpec {
  id: RouteId;
  /** Column heading in the conformance table. */
  label: string;
  /** The model name the CLI asks for. */
  model: string;
  /** What the upstream is asked for (a route rename), when not the simulator. */
  upstreamModel: string | undefined;
  /** Claude Code's second model (Explore subagent, ANTHROPIC_DEFAULT_HAIKU_MODEL) on this route. */
  smallModel: string | undefined;
  smallUpstreamModel: string | undefined;
  /** A second name for the route whose upstream gets another name (a route rename, `upstreamModel`). */
  alias: { model: string; upstreamModel: string } | undefined;
  /**
   * Codex only: a name catalogued as Codex's default model family (a copy of the `gpt-6.2-sol`
   * entry, or that model itself), for which Codex sends its "lite" shape: tools in an
   * `additional_tools` item, namespaces, the freeform code-mode `exec` tool. Same upstream and
   * upstream model as the route.
   */
  lite?: string;
  /** The scripted loopback upstream behind the route, or undefined for the built-in simulator. */
  stub: StubName | undefined;
  crossFormat: boolean;
}

export const STUB_FORMAT: Record<StubName, WireFormat> = { anthropic: 'messages', openai: 'responses', chat: 'chat', bedrock: 'messages' };

/**
 * Bedrock model ids, one of each form: a foundation model (the one CountTokens takes), a
 * cross-Region inference profile, and an application inference profile ARN (a `/` and `:`s in
 * the path segment the gateway encodes and signs).
 */
export const BEDROCK_MODELS = {
  foundation: 'anthropic.claude-sonnet-5-v1:0',
  profile: 'us.anthropic.claude-haiku-4-5-20251001-v1:0',
  codexProfile: 'us.anthropic.claude-sonnet-5-v1:0',
  applicationProfile: `arn:aws:bedrock:${BEDROCK_REGION}:123456789012:application-inference-profile/cc0bedrock01`,
};

// Same-format routes use provider model names unchanged (passthrough, byte for byte); the
// `alias` names exercise a route rename. Cross-format routes always rename (different providers).
export const CLAUDE_ROUTES: RouteSpec[] = [
  {
    id: 'anthropic',
    label: 'anthropic upstream (same format)',
    model: 'claude-sonnet-5',
    upstreamModel: undefined,
    smallModel: 'claude-haiku-4-5-20251001',
    smallUpstreamModel: undefined,
    alias: { model: 'claude-gw-team', upstreamModel: 'claude-sonnet-5' },
    stub: 'anthropic',
    crossFormat: false,
  },
  {
    id: 'simulator',
    label: 'simulator',
    model: 'claude-gw-simulator',
    upstreamModel: undefined,
    smallModel: 'claude-gw-simulator-small',
    smallUpstreamModel: undefined,
    alias: { model: 'claude-gw-simulator-alias', upstreamModel: 'claude-simulated-upstream' },
    stub: undefined,
    crossFormat: false,
  },
  {
    id: 'openai',
    label: 'openai upstream (Responses)',
    model: 'claude-gw-responses',
    upstreamModel: 'gpt-5.5',
    smallModel: 'claude-gw-responses-small',
    smallUpstreamModel: 'gpt-5.5-mini',
    alias: undefined,
    stub: 'openai',
    crossFormat: true,
  },
  {
    id: 'openai-chat',
    label: 'openai-chat upstream (Chat Completions)',
    model: 'claude-gw-chat',
    upstreamModel: 'local-coder',
    smallModel: 'claude-gw-chat-small',
    smallUpstreamModel: 'local-coder-small',
    alias: undefined,
    stub: 'chat',
    crossFormat: true,
  },
  {
    // Same format: the Messages request passes through, rewritten as InvokeModel takes it.
    id: 'bedrock',
    label: 'bedrock upstream (InvokeModel, SigV4)',
    model: 'claude-gw-bedrock',
    upstreamModel: BEDROCK_MODELS.foundation,
    smallModel: 'claude-gw-bedrock-small',
    smallUpstreamModel: BEDROCK_MODELS.profile,
    alias: { model: 'claude-gw-bedrock-arn', upstreamModel: BEDROCK_MODELS.applicationProfile },
    stub: 'bedrock',
    crossFormat: false,
  },
];

export const CODEX_ROUTES: RouteSpec[] = [
  // The same-format route's lite name is Codex's own default model, passed through unchanged.
  { id: 'openai', label: 'openai upstream (same format)', model: 'gpt-5.5', upstreamModel: undefined, smallModel: undefined, smallUpstreamModel: undefined, alias: { model: 'gpt-gw-team', upstreamModel: 'gpt-5.5' }, lite: 'gpt-6.2-sol', stub: 'openai', crossFormat: false },
  { id: 'simulator', label: 'simulator', model: 'gpt-gw-simulator', upstreamModel: undefined, smallModel: undefined, smallUpstreamModel: undefined, alias: { model: 'gpt-gw-simulator-alias', upstreamModel: 'gpt-simulated-upstream' }, lite: 'gpt-gw-simulator-lite', stub: undefined, crossFormat: false },
  { id: 'anthropic', label: 'anthropic upstream (Messages)', model: 'gpt-gw-anthropic', upstreamModel: 'claude-sonnet-5', smallModel: undefined, smallUpstreamModel: undefined, alias: undefined, lite: 'gpt-gw-anthropic-lite', stub: 'anthropic', crossFormat: true },
  { id: 'openai-chat', label: 'openai-chat upstream (Chat Completions)', model: 'gpt-gw-chat', upstreamModel: 'local-coder', smallModel: undefined, smallUpstreamModel: undefined, alias: undefined, lite: 'gpt-gw-chat-lite', stub: 'chat', crossFormat: true },
  { id: 'bedrock', label: 'bedrock upstream (Claude, InvokeModel, SigV4)', model: 'gpt-gw-bedrock', upstreamModel: BEDROCK_MODELS.codexProfile, smallModel: undefined, smallUpstreamModel: undefined, alias: undefined, lite: 'gpt-gw-bedrock-lite', stub: 'bedrock', crossFormat: true },
];

/**
 * Routes with a fallback (issue: resilient routes): the primary is scripted to fail, the fallback
 * serves, through the translator (another provider's format).
 */
export const FALLBACK_ROUTES = {
  claude: { model: 'claude-gw-fallback', primary: 'anthropic' as StubName, primaryModel: 'claude-sonnet-5', fallback: 'openai' as StubName, fallbackModel: 'gpt-5.5' },
  codex: { model: 'gpt-gw-fallback', primary: 'openai' as StubName, primaryModel: 'gpt-5.5', fallback: 'anthropic' as StubName, fallbackModel: 'claude-sonnet-5' },
};

/**
 * Upstream credentials the gateway holds (the CLIs never see them). The chat upstream has none,
 * like a self-hosted server; Bedrock has no key either: the gateway signs with the AWS
 * credentials in its environment (BEDROCK_CREDENTIALS).
 */
export const UPSTREAM_SECRETS = { STUB_ANTHROPIC_KEY: 'sk-ant-stub-upstream-secret', STUB_OPENAI_KEY: 'sk-stub-openai-upstream-secret' };

/** The routing config file the suite gives `npm start` (GATEWAY_CONFIG). */
export function routingConfig(stubUrls: Record<StubName, string>): unknown {
  const routes: { model: string; upstream: string; upstreamModel?: string; fallbacks?: { upstream: string; upstreamModel: string }[] }[] = [];
  for (const route of Object.values(FALLBACK_ROUTES)) {
    routes.push({ model: route.model, upstream: route.primary, upstreamModel: route.primaryModel, fallbacks: [{ upstream: route.fallback, upstreamModel: route.fallbackModel }] });
  }
  for (const route of [...CLAUDE_ROUTES, ...CODEX_ROUTES]) {
    const upstream = route.stub ?? 'sim';
    routes.push({ model: route.model, upstream, ...(route.upstreamModel ? { upstreamModel: route.upstreamModel } : {}) });
    if (route.smallModel) routes.push({ model: route.smallModel, upstream, ...(route.smallUpstreamModel ? { upstreamModel: route.smallUpstreamModel } : {}) });
    if (route.alias) routes.push({ model: route.alias.model, upstream, upstreamModel: route.alias.upstreamModel });
    if (route.lite) routes.push({ model: route.lite, upstream, ...(route.upstreamModel ? { upstreamModel: route.upstreamModel } : {}) });
  }
  return {
    upstreams: {
      anthropic: { type: 'anthropic', baseUrl: stubUrls.anthropic, apiKeyEnv: 'STUB_ANTHROPIC_KEY' },
      openai: { type: 'openai', baseUrl: `${stubUrls.openai}/v1`, apiKeyEnv: 'STUB_OPENAI_KEY' },
      chat: { type: 'openai-chat', baseUrl: `${stubUrls.chat}/v1` },
      bedrock: { type: 'bedrock', region: BEDROCK_REGION, baseUrl: stubUrls.bedrock },
      sim: { type: 'simulator' },
    },
    routes,
  };
}

/** Every concrete model id the config lists that Claude Code's discovery keeps: those containing claude or anthropic. */
export function listedClaudeModels(): string[] {
  const ids = [...CLAUDE_ROUTES, ...CODEX_ROUTES].flatMap((route) => [route.model, route.smallModel, route.alias?.model, route.lite]);
  return [...ids, ...Object.values(FALLBACK_ROUTES).map((route) => route.model)].filter((id): id is string => id !== undefined && /claude|anthropic/i.test(id));
}
