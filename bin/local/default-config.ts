import type { RoutingConfig } from '../../lambda/config/routing.ts';

/** Model ids listed by default, so `GET /v1/models` (and Claude Code's discovery) has names. */
const CLAUDE_MODELS = ['claude-opus-4-8', 'claude-sonnet-5', 'claude-haiku-4-5-20251001'];
const OPENAI_MODELS = ['gpt-5.5'];

/**
 * The config `npm start` uses when GATEWAY_CONFIG names no file. Claude models go to Anthropic
 * and GPT models to OpenAI when their provider key is in the environment; without it, to the
 * built-in simulator speaking that provider's format, so Claude Code on a GPT model (and Codex on
 * a Claude model) goes through the translator offline, exactly as it would to the provider.
 * With no key at all, any other model name is answered by the simulator in the client's own format.
 */
export function defaultRoutingConfig(env: NodeJS.ProcessEnv): { config: RoutingConfig; notice: string } {
  const anthropic = Boolean(env.ANTHROPIC_API_KEY);
  const openai = Boolean(env.OPENAI_API_KEY);
  const config: RoutingConfig = { upstreams: {}, routes: [] };
  config.upstreams[anthropic ? 'anthropic' : 'simulator-anthropic'] = anthropic ? { type: 'anthropic', apiKeyEnv: 'ANTHROPIC_API_KEY' } : { type: 'simulator', speaks: 'messages' };
  config.upstreams[openai ? 'openai' : 'simulator-openai'] = openai ? { type: 'openai', apiKeyEnv: 'OPENAI_API_KEY' } : { type: 'simulator', speaks: 'responses' };
  const claude = anthropic ? 'anthropic' : 'simulator-anthropic';
  const gpt = openai ? 'openai' : 'simulator-openai';
  for (const model of CLAUDE_MODELS) config.routes.push({ model, upstream: claude });
  for (const model of OPENAI_MODELS) config.routes.push({ model, upstream: gpt });
  config.routes.push({ model: 'claude-*', upstream: claude }, { model: 'gpt-*', upstream: gpt }, { model: 'o*', upstream: gpt });
  if (!anthropic && !openai) {
    config.upstreams.simulator = { type: 'simulator' };
    config.routes.push({ model: '*', upstream: 'simulator' });
    return {
      config,
      notice: "No ANTHROPIC_API_KEY or OPENAI_API_KEY set: every model is answered by the built-in simulator, claude-* in Anthropic's format and gpt-* and o* in OpenAI's (a client of the other format goes through the translator), any other name in the client's own.",
    };
  }
  const routed = [anthropic ? 'claude-* -> Anthropic' : "claude-* -> the simulator (Anthropic's format)", openai ? 'gpt-*, o* -> OpenAI' : "gpt-*, o* -> the simulator (OpenAI's format)"].join('; ');
  return { config, notice: `Default routes: ${routed}. Other models are not routed.` };
}
